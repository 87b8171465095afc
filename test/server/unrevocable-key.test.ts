/**
 * Whoever holds a key's current value could make it impossible to revoke: the disabling write
 * (leaked-keys.ts) adds the disabled-reason annotation through a full validation of the object; a
 * key whose annotations are filled to the 256 KiB limit failed it (422 TooLong). POST /auth/revoke
 * then answered the anonymous reporter a 422 naming the key (not RFC 7009's 200 {}), and the key kept
 * working; a GitHub alert holding such a key stopped at it, so every key after it in the batch stayed
 * live, and GitHub's retries of the same batch stopped there again. Now the key is disabled without
 * the reason annotation (the audit event keeps it), and each alert entry stands alone.
 */
import { generateKeyPairSync, sign } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maxAnnotationsBytes } from '../../src/api/object-meta.js';
import { conflict } from '../../src/api/errors.js';
import { keyOf } from '../../src/registry/context.js';
import type { StoredObject } from '../../src/store/types.js';
import { reportLeakedKey } from '../../src/server/leaks/leaked-keys.js';
import { startInProcess, type InProcess } from '../support/in-process.js';

const json = { 'Content-Type': 'application/json' };
const form = { 'Content-Type': 'application/x-www-form-urlencoded' };
const github = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });

describe('a key whose holder filled its annotations', () => {
  let s: InProcess;
  let keyServer: Server;
  beforeAll(async () => {
    const published = JSON.stringify({ public_keys: [{ key_identifier: 'k1', key: github.publicKey.export({ type: 'spki', format: 'pem' }), is_current: true }] });
    keyServer = createServer((_req, res) => res.writeHead(200, json).end(published));
    await new Promise<void>((done) => keyServer.listen(0, '127.0.0.1', done));
    const { port } = keyServer.address() as AddressInfo;
    s = await startInProcess({ leakReports: { gitHubKeysUrl: `http://127.0.0.1:${port}/keys` } });
  });
  afterAll(async () => {
    await s?.close();
    await new Promise<void>((done) => keyServer?.close(() => done()));
  });

  const makeKey = async (name: string, user: string) => {
    const res = await s.fetch(`${s.api}/ownedaccesskeys`, { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name }, spec: { user } }) });
    expect(res.status).toBe(201);
    return ((await res.json()) as { spec: { key: string } }).spec.key;
  };
  const works = async (key: string) => (await fetch(`${s.api}/teams`, { headers: { Authorization: `Bearer ${key}` } })).status;
  /** With the key itself (as whoever found it can), fills its annotations to exactly the limit. */
  const pad = async (name: string, key: string) => {
    const k = 'pad.example.com/x';
    const res = await fetch(`${s.api}/ownedaccesskeys/${name}`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/merge-patch+json', Authorization: `Bearer ${key}` },
      body: JSON.stringify({ metadata: { annotations: { [k]: 'p'.repeat(maxAnnotationsBytes - k.length) } } }),
    });
    expect(res.status).toBe(200);
  };

  it('POST /auth/revoke still disables it, and answers 200 {} as for any string', async () => {
    const key = await makeKey('padded', 'mallory');
    await pad('padded', key);
    const res = await fetch(`${s.base}/auth/revoke`, { method: 'POST', headers: form, body: new URLSearchParams({ token: key }).toString() });
    const text = await res.text();
    expect.soft(res.status, text.slice(0, 200)).toBe(200);
    expect.soft(text).not.toContain('padded');
    expect(await works(key)).toBe(401);
  });

  it("a GitHub alert with such a key in it still disables the batch's other keys", async () => {
    const bait = await makeKey('bait', 'mallory');
    await pad('bait', bait);
    const victim = await makeKey('victim-ci', 'victim');
    const body = JSON.stringify([
      { token: bait, type: 'teamkeys_access_key', url: 'https://github.com/m/p/blob/x/a', source: 'content' },
      { token: victim, type: 'teamkeys_access_key', url: 'https://github.com/v/app/blob/x/.env', source: 'content' },
    ]);
    const res = await fetch(`${s.base}/auth/secret-scanning/github`, {
      method: 'POST',
      headers: { ...json, 'Github-Public-Key-Identifier': 'k1', 'Github-Public-Key-Signature': sign('sha256', Buffer.from(body), github.privateKey).toString('base64') },
      body,
    });
    expect.soft(res.status).toBe(200);
    expect(await works(victim)).toBe(401);
  });

  /**
   * The report reads the key by the value's hash, then disables it by name: a key deleted and
   * created again under that name in between is another key (noted by a review). Between the two,
   * here, the first disabling write finds the key replaced (`replace` runs before it).
   */
  const racedReport = async (value: string, replace: () => Promise<void>) => {
    const keys = s.registry.ownedaccesskeys;
    const patch = keys.patch.bind(keys);
    let raced = false;
    keys.patch = (async (...args: Parameters<typeof keys.patch>) => {
      if (!raced) {
        raced = true;
        await replace();
      }
      return patch(...args);
    }) as typeof keys.patch;
    try {
      return await reportLeakedKey(s.registry, value, { address: '192.0.2.9', via: 'revoke', username: 'system:anonymous' }, new Date());
    } finally {
      keys.patch = patch;
    }
  };
  /** Deletes the key `name` and creates another under its name (with `key`, or a value of the server's); its value. */
  const recreate = async (name: string, user: string, key?: string) => {
    expect((await s.fetch(`${s.api}/ownedaccesskeys/${name}`, { method: 'DELETE' })).status).toBe(200);
    const res = await s.fetch(`${s.api}/ownedaccesskeys`, { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name }, spec: { user, ...(key ? { key } : {}) } }) });
    expect(res.status).toBe(201);
    return ((await res.json()) as { spec: { key: string } }).spec.key;
  };

  it('a key created again under the name of the reported one, with another value, is left working', async () => {
    const leaked = await makeKey('replaced', 'ana');
    let fresh = '';
    const outcome = await racedReport(leaked, async () => {
      fresh = await recreate('replaced', 'ana');
    });
    // The reported value opens no key any more: nothing is disabled, the new key works.
    expect(outcome).toEqual({ known: false });
    expect(await works(fresh)).toBe(200);
    expect(await works(leaked)).toBe(401);
  });

  it("another conflict (the store's contention) is the report's refusal as it came, not a replaced key looked up again", async () => {
    const leaked = await makeKey('contended', 'ana');
    const keys = s.registry.ownedaccesskeys;
    const patch = keys.patch.bind(keys);
    let writes = 0;
    // The store gives up on a write after its retries under contention (store/log-store.ts): a 409 without a uid in it.
    keys.patch = (async () => {
      writes++;
      throw conflict({ group: 'management.service', resource: 'ownedaccesskeys' }, 'contended', 'too many concurrent updates');
    }) as typeof keys.patch;
    try {
      const outcome = await reportLeakedKey(s.registry, leaked, { address: '192.0.2.9', via: 'revoke', username: 'system:anonymous' }, new Date());
      expect(outcome).toEqual({ known: true, refused: 'Operation cannot be fulfilled on ownedaccesskeys.management.service "contended": too many concurrent updates' });
      expect(writes).toBe(1);
    } finally {
      keys.patch = patch;
    }
  });

  it('a key created again under that name with the reported value itself is disabled (looked up again)', async () => {
    const leaked = await makeKey('reborn', 'ana');
    const outcome = await racedReport(leaked, async () => void (await recreate('reborn', 'ana', leaked)));
    expect(outcome).toEqual({ known: true, disabled: 'reborn' });
    expect(await works(leaked)).toBe(401);
  });

  /**
   * A key stored in a shape the rules refuse (a restore, a hand edit, a rule tightened since) was
   * not disabled: the disabling write validated the whole key and was refused for fields it never
   * touched, and the key kept working. Validation ratchets now (src/api/ratchet.ts).
   */
  const storeOdd = async (name: string, odd: (spec: Record<string, unknown>, meta: Record<string, unknown>) => void) => {
    const ctx = s.registry.ownedaccesskeys.ctx;
    await ctx.store.guaranteedUpdate(keyOf(ctx, name), undefined, (cur) => {
      const next = structuredClone(cur) as unknown as { spec: Record<string, unknown>; metadata: Record<string, unknown> };
      odd(next.spec, next.metadata);
      return next as unknown as StoredObject;
    });
  };

  it('a key stored in a shape the schema and metadata rules refuse is still disabled by POST /auth/revoke', async () => {
    const key = await makeKey('odd-shape', 'ana');
    await storeOdd('odd-shape', (spec, meta) => {
      spec.displayName = 5;
      spec.groups = ['dev', 'dev'];
      meta.labels = { 'not a label!': 'v' };
    });
    expect(await works(key)).toBe(200);
    const res = await fetch(`${s.base}/auth/revoke`, { method: 'POST', headers: form, body: new URLSearchParams({ token: key }).toString() });
    expect(res.status).toBe(200);
    expect(await works(key)).toBe(401);
    const stored = (await (await s.fetch(`${s.api}/ownedaccesskeys/odd-shape`)).json()) as { spec: Record<string, unknown>; metadata: { annotations?: Record<string, string> } };
    expect(stored.spec).toMatchObject({ disabled: true, displayName: 5, groups: ['dev', 'dev'] });
    expect(stored.metadata.annotations?.['management.service/disabled-reason']).toBeDefined();
  });

  it('a key stored with a list longer than its bound is still disabled: the update path does not refuse the list before judging it (found by a review)', async () => {
    const key = await makeKey('long-groups', 'ana');
    await storeOdd('long-groups', (spec) => {
      spec.groups = Array.from({ length: 1001 }, (_, i) => `g${i}`);
    });
    expect(await works(key)).toBe(200);
    expect(await reportLeakedKey(s.registry, key, { address: '192.0.2.9', via: 'revoke', username: 'system:anonymous' }, new Date())).toEqual({ known: true, disabled: 'long-groups' });
    expect(await works(key)).toBe(401);
    // A PUT that lengthens it is refused, as an apply declaring it and a create with it are.
    const current = (await (await s.fetch(`${s.api}/ownedaccesskeys/long-groups`)).json()) as { spec: { groups: string[] } };
    current.spec.groups.push('one-more');
    const put = await s.fetch(`${s.api}/ownedaccesskeys/long-groups`, { method: 'PUT', headers: json, body: JSON.stringify(current) });
    expect(put.status).toBe(422);
    expect(await put.text()).toContain('spec.groups');
    const apply = await s.fetch(`${s.api}/ownedaccesskeys/long-groups?fieldManager=t&force=true`, { method: 'PATCH', headers: { 'Content-Type': 'application/apply-patch+yaml' }, body: JSON.stringify({ apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', metadata: { name: 'long-groups' }, spec: { groups: current.spec.groups } }) });
    expect(apply.status).toBe(422);
    const created = await s.fetch(`${s.api}/ownedaccesskeys`, { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name: 'long-new' }, spec: { user: 'ana', groups: current.spec.groups } }) });
    expect(created.status).toBe(422);
  });

  it('a key stored with two holders is still disabled by a report, and cannot be given a third', async () => {
    const key = await makeKey('two-holders', 'ana');
    await storeOdd('two-holders', (spec) => {
      spec.subject = 'robot';
    });
    expect(await works(key)).toBe(200);
    expect(await reportLeakedKey(s.registry, key, { address: '192.0.2.9', via: 'revoke', username: 'system:anonymous' }, new Date())).toEqual({ known: true, disabled: 'two-holders' });
    expect(await works(key)).toBe(401);
    const moved = await s.fetch(`${s.api}/ownedaccesskeys/two-holders`, { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ spec: { subject: 'other' } }) });
    expect(moved.status).toBe(422);
    expect(await moved.text()).toContain('exactly one of spec.user, spec.team or spec.subject may be set');
  });
});
