/**
 * The one place a Login key is made: through the registry and the admission chain every write
 * meets (server/admission/chain.ts), exempt only from what it declares below, with the identity the
 * provider vouched for, the upstream refresh token sealed in connectorData, and a ttl counted from
 * the last use. Logging in again from the same CLI replaces its previous Login key.
 */
import { ApiError } from '../api/errors.js';
import type { ConnectorIdentity, OwnedAccessKey } from '../api/types.js';
import { isLoginKey, loginKeyType, refusedAnnotation } from '../auth/login-keys.js';
import { timestamp } from '../registry/context.js';
import type { Registry } from '../registry/registry.js';
import type { Requester } from '../registry/write-observer.js';
import { Holds, keyMintAdmission, type AdmissionContext, type PluginName } from '../server/admission/chain.js';
import type { Admit } from '../registry/context.js';
import { ownerReferencesOf } from '../api/owner-references.js';

/**
 * The admission plugins a mint is exempt from, and why: the Login-key rules refuse type Login to
 * every API write (sign-in is the one writer they leave it to), and escalation compares a writer's
 * key with what it writes, where here the identity provider vouched for the person and no key
 * writes. Every other plugin (the keys-per-user quota among them) judges a mint as any create.
 */
export const mintExemptions: readonly PluginName[] = ['login-keys', 'escalation'];

/** The field manager of every write sign-in makes (minting and refresh). */
export const signInManager = 'teamkeys-signin';

/** What the upstream connector needs later: the refresh token (sealed at rest with the rest of connectorData). */
export interface ConnectorData {
  refreshToken?: string;
}

export interface MintRequest {
  username: string;
  identity: ConnectorIdentity;
  refreshToken?: string;
  ttlSeconds: number;
  /** The CLI's previous Login key, deleted once the new one exists (only a Login key of the same user). */
  replaces?: string;
  requester: Requester;
  /** Shown in the key's description: how the person signed in. */
  via: string;
  /**
   * The username is not prefixed (--oidc-username-prefix -, or the email claim): it may be a name
   * known otherwise, so the sign-in may take it only if no key outside sign-in acts for it.
   */
  unprefixed?: boolean;
}

export interface MintedKey {
  name: string;
  key: string;
  user: string;
  /** When the key expires unless used: RFC 3339. */
  expirationTimestamp: string;
  ttlSeconds: number;
}

/** A DNS-label-safe prefix for the key's generated name: `login-<user>-`, the user without its issuer prefix. */
export function namePrefixFor(username: string): string {
  const clean = username.slice(username.lastIndexOf('#') + 1).toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40);
  return `login-${clean || 'user'}-`;
}

/**
 * Whether a live Login key of this username belongs to another account of the provider (another
 * subject): the username claim is not unique everywhere (Dex with several connectors, names people
 * may edit), so the first account signed in under a name keeps it. A key whose refresh the provider
 * refused (the account gone) binds nothing.
 */
async function heldByAnotherAccount(registry: Registry, username: string, identity: ConnectorIdentity): Promise<boolean> {
  for (const obj of await registry.ownedaccesskeys.byField('holder', username)) {
    const key = obj as OwnedAccessKey;
    if (!isLoginKey(key) || key.spec.user !== username || key.metadata.deletionTimestamp || key.metadata.annotations?.[refusedAnnotation] !== undefined) continue;
    if (key.spec.identity?.connector === identity.connector && key.spec.identity?.userId !== identity.userId) return true;
  }
  return false;
}

/** The admission of a mint: the chain, less mintExemptions, a refusal worded for the person signing in. */
function mintAdmission(ctx: AdmissionContext, req: MintRequest, holds: Holds): Admit {
  const who = { name: req.username, user: req.username, groups: req.identity.groups ?? [], teams: [], clusterRoles: new Set<string>(), keyName: '' };
  const word = (refusal: string) => `${req.username} may not sign in now: ${refusal}; sign out elsewhere (teamkeys logout) or ask your administrator to delete one of those keys`;
  return keyMintAdmission(ctx, who, holds, mintExemptions, word, req.replaces ? { replaces: req.replaces } : {});
}

/** Mints a Login key; `admission` is the server's chain (absent only where a test builds a registry alone). */
/**
 * Whether a key outside sign-in acts for `username`: a key that is neither a Login key nor tied to
 * one (registry/keys.ts), the bootstrap administrator's included. Such a name is someone's
 * already, and an unprefixed sign-in may not take it.
 */
async function heldOutsideSignIn(registry: Registry, username: string): Promise<boolean> {
  const keys = registry.ownedaccesskeys;
  const items = (await keys.byField('holder', username)) as OwnedAccessKey[];
  for (const key of items) {
    if (isLoginKey(key) || key.spec.user !== username) continue;
    const tied = [];
    for (const ref of ownerReferencesOf(key.metadata)) {
      if (ref.kind !== 'OwnedAccessKey' || ref.apiVersion !== keys.info.apiVersion) continue;
      const owner = (await keys.get(ref.name).catch(() => undefined)) as OwnedAccessKey | undefined;
      if (owner?.metadata.uid === ref.uid && isLoginKey(owner)) tied.push(ref);
    }
    if (tied.length === 0) return true;
  }
  return false;
}

/** The mints under way, by registry and username (entries leave when their last mint ends). */
const minting = new WeakMap<Registry, Map<string, Promise<unknown>>>();

/**
 * Runs the mints of one username one after another on this server: the checks of who holds the
 * name read the keys and the create writes one, so two first sign-ins of different accounts under
 * one name at the same moment would both pass the checks (a review found it). Replicas sharing a
 * store do not see each other's mints under way (docs/sso.md).
 */
async function oneAtATime<T>(registry: Registry, username: string, work: () => Promise<T>): Promise<T> {
  let byName = minting.get(registry);
  if (!byName) minting.set(registry, (byName = new Map()));
  const run = (byName.get(username) ?? Promise.resolve()).then(work, work);
  const settled = run.then(
    () => undefined,
    () => undefined,
  );
  byName.set(username, settled);
  void settled.then(() => {
    if (byName.get(username) === settled) byName.delete(username);
  });
  return run;
}

export function mintLoginKey(registry: Registry, req: MintRequest, now: Date, admission?: AdmissionContext): Promise<MintedKey> {
  return oneAtATime(registry, req.username, () => mintNow(registry, req, now, admission));
}

async function mintNow(registry: Registry, req: MintRequest, now: Date, admission?: AdmissionContext): Promise<MintedKey> {
  const keys = registry.ownedaccesskeys;
  if (await heldByAnotherAccount(registry, req.username, req.identity)) {
    throw new ApiError(403, 'Forbidden', `${req.username} is signed in with another account of the identity provider: an account that only shares the name does not sign in as them; ask your administrator`);
  }
  if (req.unprefixed && (await heldOutsideSignIn(registry, req.username))) {
    throw new ApiError(403, 'Forbidden', `${req.username} is the name of a user with access keys outside sign-in: signing in may not take it (the server takes usernames unprefixed, --oidc-username-prefix -); ask your administrator`);
  }
  // Only a live Login key of this user is replaced, so only such a key may be left out of the
  // quota: naming another key (a CI key of the same user) would count it out and keep it.
  if (req.replaces && !(await replaceableLoginKey(registry, req.replaces, req.username))) req = withoutReplaces(req);
  const identity: ConnectorIdentity = { ...req.identity };
  if (req.refreshToken) identity.connectorData = JSON.stringify({ refreshToken: req.refreshToken } satisfies ConnectorData);
  // The quota's place is held until the key is stored: a create of the user's through the API
  // meanwhile counts it (mints of one user already run one at a time).
  const holds = new Holds();
  const { object } = await holds.around(() =>
    keys.create(
      {
        apiVersion: keys.info.apiVersion,
        kind: 'OwnedAccessKey',
        metadata: { generateName: namePrefixFor(req.username) },
        spec: {
          displayName: `${req.username} (signed in ${req.via})`,
          user: req.username,
          type: loginKeyType,
          identity,
          identityRefresh: timestamp(now),
          ttl: req.ttlSeconds,
          ttlAfterLastActivity: true,
        },
      },
      // The person signing in sets the value: their temporary access rides on it.
      { fieldManager: signInManager, requester: req.requester, valueSetBy: `user:${req.username}`, ...(admission ? { admit: mintAdmission(admission, req, holds) } : {}) },
    ),
  );
  const created = object as OwnedAccessKey;
  if (req.replaces && req.replaces !== created.metadata.name) await removePrevious(registry, req.replaces, req.username, req.requester);
  return {
    name: created.metadata.name!,
    key: created.spec.key!,
    user: req.username,
    expirationTimestamp: timestamp(new Date(now.getTime() + req.ttlSeconds * 1000)),
    ttlSeconds: req.ttlSeconds,
  };
}

/** The named key, if it is a live Login key of this user (the only kind a sign-in replaces). */
async function replaceableLoginKey(registry: Registry, name: string, user: string): Promise<OwnedAccessKey | undefined> {
  const old = (await registry.ownedaccesskeys.get(name).catch(() => undefined)) as OwnedAccessKey | undefined;
  if (!old || !isLoginKey(old) || old.spec.user !== user || old.metadata.deletionTimestamp) return undefined;
  return old;
}

function withoutReplaces(req: MintRequest): MintRequest {
  const { replaces: _ignored, ...rest } = req;
  return rest;
}

/** Deletes the named key if it is a Login key of the same user; anything else is left alone. */
async function removePrevious(registry: Registry, name: string, user: string, requester: Requester): Promise<void> {
  const keys = registry.ownedaccesskeys;
  const old = await replaceableLoginKey(registry, name, user);
  if (!old) return;
  await keys.delete(name, { fieldManager: signInManager, requester, preconditions: { uid: old.metadata.uid! } }).catch((err: unknown) => {
    if (!(err instanceof ApiError && (err.code === 404 || err.code === 409))) throw err;
  });
}
