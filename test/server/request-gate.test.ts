/**
 * Issue 33, paths 1, 2 and 6, over real HTTP: no door opens before its key. The path that routes
 * is the path that authenticates, however it is spelled; a request without a key is refused before
 * its body is read or decoded, whatever path it names; a key without the verb gets its 403 before
 * its body is read. Other loopback addresses (127.x.y.z) stand in for other machines, each with its
 * own failed-authentication budget.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminKey, startInProcess, type InProcess } from '../support/in-process.js';
import { messageOf, rawRequest } from './raw-path.js';

const prefix = '/kubernetes/management';
const v1 = `${prefix}/apis/management.service/v1`;
let server: InProcess;
let bobKey: string;
let nextAddress = 2;
/** A loopback address no earlier request came from: a fresh failure budget. */
const freshAddress = () => {
  const n = nextAddress++;
  return `127.0.${n >> 8}.${n & 255}`;
};

beforeAll(async () => {
  // One failure at once per address, regained only after 1000 s: a second failure is 429.
  server = await startInProcess({ failureLimit: { burst: 1, perSecond: 0.001 } });
  const created = await server.fetch(`${server.api}/ownedaccesskeys`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ metadata: { name: 'bob-key' }, spec: { user: 'bob' } }) });
  expect(created.status).toBe(201);
  bobKey = ((await created.json()) as { spec: { key: string } }).spec.key;
});
afterAll(async () => {
  await server?.close();
});

/** Whether a keyless request just made from `from` spent that address's failure budget: the next one is 429. */
async function budgetSpent(from: string): Promise<boolean> {
  return (await rawRequest(server.base, `${prefix}/apis`, { from })).status === 429;
}

describe('2: a percent-encoded prefix does not skip authentication', () => {
  for (const path of [`/kubernetes/%6danagement/openapi/v2`, `${prefix.replace('management', 'managemen%74')}/api/v1/events?watch=1`, `/kubernetes/m%61nagement/apis/management.service/v1/teams`, `/kubernetes/management/apis/management.service/v1/%74eams/x`]) {
    it(`${path} without a key is 401 and spends the failed-authentication budget`, async () => {
      const from = freshAddress();
      const a = await rawRequest(server.base, path, { from });
      expect(a.status).toBe(401);
      expect(a.headers['www-authenticate']).toBe('Bearer realm="teamkeys"');
      expect(JSON.parse(a.body)).toMatchObject({ kind: 'Status', code: 401, reason: 'Unauthorized' });
      expect(await budgetSpent(from)).toBe(true);
    });
  }

  it('with a key, the encoded spelling is the same request: 200 for the document, 403 for a key without the right', async () => {
    const admin = await rawRequest(server.base, '/kubernetes/%6danagement/openapi/v2', { headers: { Authorization: `Bearer ${adminKey}` } });
    expect(admin.status).toBe(200);
    const plain = await rawRequest(server.base, `${v1}/teams/x/status`, { method: 'PUT', headers: { Authorization: `Bearer ${bobKey}`, 'Content-Type': 'application/json' }, body: Buffer.from('{}') });
    const encoded = await rawRequest(server.base, `${v1}/teams/x/%73tatus`, { method: 'PUT', headers: { Authorization: `Bearer ${bobKey}`, 'Content-Type': 'application/json' }, body: Buffer.from('{}') });
    expect(plain.status).toBe(403);
    expect([encoded.status, messageOf(encoded)]).toEqual([plain.status, messageOf(plain)]);
  });
});

describe('1: without a key, no body is read or decoded, whatever the path', () => {
  it('keyless YAML bodies POSTed to an unknown path and to /auth are 401 before they are sent whole, and the administrator is answered meanwhile', async () => {
    const yaml = Buffer.from('- a\n'.repeat(250_000)); // 1 MB, about 3 s of the old shared decoder each
    const from = freshAddress();
    // Only the first 4 KiB are sent: the answer comes without the rest.
    // (/auth/token is anonymous always: the token exchange of CI jobs, bounded to anonymousBodyLimit.)
    const flood = [`/nope`, `/auth/device`, `${v1}/teams`].map((path) => rawRequest(server.base, path, { method: 'POST', from, headers: { 'Content-Type': 'application/yaml' }, body: yaml, sendOnly: 4096 }));
    const apply = await server.fetch(`${server.api}/teams/applied?fieldManager=gate-test`, { method: 'PATCH', headers: { 'Content-Type': 'application/apply-patch+yaml' }, body: 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: applied\n' });
    expect(apply.status).toBe(201);
    const answers = await Promise.all(flood);
    // The first spends the one failure the address has; the others are refused for it.
    expect(answers.map((a) => a.status).sort()).toEqual([401, 429, 429]);
  });

  it('a keyless request for a path nobody serves is 401, not 404', async () => {
    const a = await rawRequest(server.base, '/nope/../../etc/passwd', { from: freshAddress() });
    expect(a.status).toBe(401);
  });

  it('the anonymous list stays open, in any spelling that means it: /healthz, /readyz, /livez, /version', async () => {
    for (const path of ['/healthz', '/readyz', '/livez', '/version', '/%68ealthz', '//healthz/', '/x/../healthz', `${prefix}/version`]) {
      expect((await rawRequest(server.base, path, { from: freshAddress() })).status, path).toBe(200);
    }
    // Another path is not anonymous because it starts like one.
    expect((await rawRequest(server.base, '/healthzx', { from: freshAddress() })).status).toBe(401);
    expect((await rawRequest(server.base, '/HEALTHZ', { from: freshAddress() })).status).toBe(401);
  });
});

describe('6: a key without the verb gets 403 before its body is read', () => {
  it('a 3 MB Team body from a key without create on teams is refused with 403 while the body is still unsent, and /healthz from another client answers', async () => {
    const annotations = Object.fromEntries(Array.from({ length: 190_000 }, (_, i) => [`a${i}`, 'v']));
    const body = Buffer.from(JSON.stringify({ metadata: { name: 'big', annotations } }).slice(0, 3_000_000));
    const refused = rawRequest(server.base, `${v1}/teams?dryRun=All`, { method: 'POST', headers: { Authorization: `Bearer ${bobKey}`, 'Content-Type': 'application/json' }, body, sendOnly: 64 * 1024 });
    const health = await rawRequest(server.base, '/healthz', { from: freshAddress() });
    expect(health.status).toBe(200);
    const a = await refused;
    expect(a.status).toBe(403);
    expect(messageOf(a)).toBe('teams.management.service is forbidden: User "bob" cannot create resource "teams" in API group "management.service" at the cluster scope');
  });

  it('so is a YAML update of a team bob has no rights on, and a write to status by a non-admin', async () => {
    expect((await server.fetch(`${server.api}/teams`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ metadata: { name: 'theirs' } }) })).status).toBe(201);
    const yaml = Buffer.from('- a\n'.repeat(250_000));
    const put = await rawRequest(server.base, `${v1}/teams/theirs`, { method: 'PUT', headers: { Authorization: `Bearer ${bobKey}`, 'Content-Type': 'application/yaml' }, body: yaml, sendOnly: 4096 });
    expect(put.status).toBe(403);
    expect(messageOf(put)).toMatch(/^teams.management.service "theirs" is forbidden: User "bob" cannot update resource "teams"/);
    const status = await rawRequest(server.base, `${v1}/ownedaccesskeys/bob-key/status`, { method: 'PATCH', headers: { Authorization: `Bearer ${bobKey}`, 'Content-Type': 'application/merge-patch+json' }, body: Buffer.alloc(1_000_000, 0x20), sendOnly: 4096 });
    expect(status.status).toBe(403);
  });

  it('a key that may create its own keys still may: the body is judged after it is read', async () => {
    const own = await rawRequest(server.base, `${v1}/ownedaccesskeys/bob-second?fieldManager=bob`, { method: 'PATCH', headers: { Authorization: `Bearer ${bobKey}`, 'Content-Type': 'application/apply-patch+yaml' }, body: Buffer.from('apiVersion: management.service/v1\nkind: OwnedAccessKey\nmetadata:\n  name: bob-second\nspec:\n  user: bob\n') });
    expect(own.status).toBe(201);
    const other = await rawRequest(server.base, `${v1}/ownedaccesskeys`, { method: 'POST', headers: { Authorization: `Bearer ${bobKey}`, 'Content-Type': 'application/yaml' }, body: Buffer.from('metadata:\n  name: for-carol\nspec:\n  user: carol\n') });
    expect(other.status).toBe(403);
  });
});

describe('1: decoding cannot be jammed by one caller', () => {
  it('a YAML flood from one caller (20 bodies) is held to a few bodies (429 Retry-After beyond), and another caller\'s apply is answered before the flood\'s last', async () => {
    // Some hundreds of ms of a thread each, under the size bounds: 20,000 users (past the 2,048 fields and items a body may hold: 413 once decoded).
    const heavy = Buffer.from(`metadata: {name: flood}\nspec:\n  users:\n${Array.from({ length: 20_000 }, (_, i) => `  - user${i}`).join('\n')}\n`);
    const order: string[] = [];
    // The decoding threads are running (they start with the first body).
    expect((await server.fetch(`${server.api}/teams?dryRun=All`, { method: 'POST', headers: { 'Content-Type': 'application/yaml' }, body: 'metadata: {name: warm}\n' })).status).toBe(201);
    const flood = Array.from({ length: 20 }, (_, i) =>
      rawRequest(server.base, `${v1}/teams?dryRun=All`, { method: 'POST', headers: { Authorization: `Bearer ${adminKey}`, 'Content-Type': 'application/yaml' }, body: heavy }).then((a) => {
        order.push(`flood ${a.status}`);
        return a;
      }),
    );
    // The flood is queued (its first answer came back) before the other caller sends.
    await Promise.race(flood);
    const t0 = Date.now();
    const apply = await rawRequest(server.base, `${v1}/ownedaccesskeys/bob-flood?fieldManager=bob`, {
      method: 'PATCH',
      headers: { Authorization: `Bearer ${bobKey}`, 'Content-Type': 'application/apply-patch+yaml' },
      body: Buffer.from('apiVersion: management.service/v1\nkind: OwnedAccessKey\nmetadata:\n  name: bob-flood\nspec:\n  user: bob\n'),
    });
    order.push(`apply ${apply.status}`);
    const answeredMs = Date.now() - t0;
    const answers = await Promise.all(flood);
    expect(apply.status).toBe(201);
    // Only a hang fails this (a quiet machine answers in well under 100 ms); the order below is the point.
    expect(answeredMs).toBeLessThan(10_000);
    const refused = answers.filter((a) => a.status === 429);
    const decoded = answers.filter((a) => a.status !== 429);
    // One caller holds at most 4 bodies at once; the rest are told when to come back.
    expect(decoded.length).toBeLessThanOrEqual(4);
    expect(decoded.map((a) => a.status)).toEqual(decoded.map(() => 413));
    expect(refused.length).toBeGreaterThanOrEqual(16);
    expect(refused[0]!.headers['retry-after']).toBe('1');
    expect(messageOf(refused[0]!)).toMatch(/^this client has 4 request bodies waiting to be decoded already; retry after 1 seconds$/);
    // The apply did not wait behind the flood's bodies: some were still decoding when it was answered.
    expect(order.slice(order.indexOf('apply 201') + 1).filter((o) => o === 'flood 413').length, order.join(', ')).toBeGreaterThan(0);
  }, 60_000);
});
