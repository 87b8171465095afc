/**
 * Sign-in in the escalation model: the server's own acts (a Login key minted through the admission
 * chain, as src/signin/mint.ts does; a sign-in ended by logout or by the provider refusing the
 * account, as the identity refresher marks it), the key-setting writes a key sends over HTTP
 * (rotation, PUT or JSON patch of spec.key, re-enabling), and the invariant: once a sign-in has
 * ended, no key written with it by a key-setting write works.
 */
import { refusedAnnotation } from '../../../src/auth/login-keys.js';
import { mintLoginKey } from '../../../src/signin/mint.js';
import { authenticatorAt, keyValue, type Model } from './harness.js';
import type { SignInWrite } from './world.js';

/** A Login key lives 20 days after its last use, as the real default. */
const loginTtlSeconds = 20 * 24 * 3600;

/** Which keys each sign-in wrote (key -> the Login keys it must end with). */
export type Written = Map<string, Set<string>>;

type KeySpec = { type?: string; disabled?: boolean };
const keysWhere = async (m: Model, keep: (spec: KeySpec) => boolean) =>
  (await m.registry.ownedaccesskeys.list()).items.filter((k) => keep((k.spec ?? {}) as KeySpec)).map((k) => k.metadata.name!);

/** The Login keys of the model, by name (the value is in m.values). */
export const loginKeys = (m: Model) => keysWhere(m, (s) => s.type === 'Login');
/** The disabled keys, by name. */
export const disabledKeys = (m: Model) => keysWhere(m, (s) => s.disabled === true);

/** The Login key a key's value is or is tied to (its authenticated identity's signIn), if it authenticates. */
export async function signInOf(m: Model, key: string): Promise<string | undefined> {
  const value = m.values.get(key);
  const who = value ? await authenticatorAt(m, new Date()).authenticate(`Bearer ${value}`).catch(() => undefined) : undefined;
  return who?.signIn?.name;
}

/** The server's acts: mint a Login key, or end one. */
export async function serverAct(m: Model, w: Extract<SignInWrite, { op: 'signIn' | 'endSignIn' }>, n: number): Promise<void> {
  if (w.op === 'signIn') {
    const identity = { userId: `sub-${w.user}`, username: w.user, groups: w.groups, connector: 'oidc' };
    const minted = await mintLoginKey(m.registry, { username: w.user, identity, ttlSeconds: loginTtlSeconds, requester: { username: w.user }, via: `in the model (${n})` }, new Date(), m.auth).catch(() => undefined);
    if (minted) m.values.set(minted.name, minted.key);
    return;
  }
  const logins = await loginKeys(m);
  if (logins.length === 0) return;
  const name = logins[w.pick % logins.length]!;
  if (w.how === 'logout') await m.request('DELETE', `/ownedaccesskeys/${name}`, undefined, m.values.get(name) ?? '');
  else await m.registry.ownedaccesskeys.patch(name, 'merge', { metadata: { annotations: { [refusedAnnotation]: 'invalid_grant' } } }, { fieldManager: 'teamkeys-signin' }).catch(() => undefined);
}

/** A key-setting write by `writer` over HTTP: its status, the key written, and its new value (learned by the writer). */
export async function keySettingWrite(m: Model, writer: string, w: Extract<SignInWrite, { op: 'setKeyValue' | 'reEnable' }>, perms: Set<string>, n: number): Promise<{ status: number; key?: string }> {
  const as = m.values.get(writer)!;
  const keys = w.op === 'reEnable' ? await disabledKeys(m) : await keysWhere(m, () => true);
  const writable = keys.filter((k) => perms.has(`update ownedaccesskeys/${k}`) || perms.has(`patch ownedaccesskeys/${k}`));
  const from = writable.length > 0 ? writable : keys;
  if (from.length === 0) return { status: 0 };
  const key = from[w.pick % from.length]!;
  if (w.op === 'reEnable') return { status: (await m.request('PATCH', `/ownedaccesskeys/${key}`, { spec: { disabled: false } }, as, 'application/merge-patch+json')).status, key };
  const value = keyValue(key, 1000 + n);
  let res: { status: number };
  if (w.verb === 'rotate') res = await m.request('POST', `/ownedaccesskeys/${key}/rotation`, { kind: 'KeyRotation', apiVersion: 'management.service/v1', key: value }, as);
  else if (w.verb === 'patch') res = await m.request('PATCH', `/ownedaccesskeys/${key}`, [{ op: 'add', path: '/spec/key', value }], as, 'application/json-patch+json');
  else {
    const current = (await m.request('GET', `/ownedaccesskeys/${key}`, undefined, as)) as unknown as { status: number; body: Record<string, unknown> & { spec?: Record<string, unknown> } };
    if (current.status !== 200) return { status: current.status, key };
    res = await m.request('PUT', `/ownedaccesskeys/${key}`, { ...current.body, spec: { ...current.body.spec, key: value } }, as);
  }
  if (res.status >= 200 && res.status < 300) m.values.set(key, value);
  return { status: res.status, key };
}

/** Whether a sign-in has ended: its Login key is gone, or the provider refused it. */
async function ended(m: Model, login: string): Promise<boolean> {
  const key = await m.registry.ownedaccesskeys.get(login).catch(() => undefined);
  return !key || key.metadata.annotations?.[refusedAnnotation] !== undefined;
}

/** The invariant: every key a key-setting write made with a sign-in that has ended is refused. One line per key that still works. */
export async function outlivingSignIn(m: Model, written: Written): Promise<string[]> {
  const authn = authenticatorAt(m, new Date());
  const found: string[] = [];
  for (const [key, logins] of written) {
    for (const login of logins) {
      if (!(await ended(m, login))) continue;
      const works = await authn.authenticate(`Bearer ${m.values.get(key) ?? ''}`).then(() => true, () => false);
      if (works) found.push(`${key} was written with the Login key ${login} and still works after that sign-in ended`);
    }
  }
  return found;
}
