/**
 * Review of issue 33 (attacker's view), over real HTTP: requests whose body the server buffers or
 * decodes before the caller is known to hold the verb. Each probe sends only the first 4 KiB of a
 * larger body: a server that judged the request before reading its body answers at once; one that
 * reads the body first never answers (the probe gives up after 3 s and says so).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintLoginKey } from '../../src/signin/mint.js';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startInProcess, type InProcess } from '../support/in-process.js';
import { startServe, type Served } from '../support/serve-process.js';
import { apiCaller, cliStandIn, type CliStandIn } from '../signin/cli-stand-in.js';
import { oidcFlags, signedInName, startProvider, type TestProvider } from '../signin/fixture.js';
import { rawRequest, type RawAnswer } from './raw-path.js';

const prefix = '/kubernetes/management';
const v1 = `${prefix}/apis/management.service/v1`;
let server: InProcess;
let bobKey: string;

beforeAll(async () => {
  server = await startInProcess();
  const created = await server.fetch(`${server.api}/ownedaccesskeys`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ metadata: { name: 'bob-key' }, spec: { user: 'bob' } }) });
  expect(created.status).toBe(201);
  bobKey = ((await created.json()) as { spec: { key: string } }).spec.key;
  expect((await server.fetch(`${server.api}/teams`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ metadata: { name: 'theirs' } }) })).status).toBe(201);
});
afterAll(async () => {
  await server?.close();
});

/** The answer to a request of which only 4 KiB of a 1 MB YAML body are sent, or 'no answer: the body is being read'. */
async function partial(method: string, path: string, key?: string): Promise<RawAnswer | string> {
  const body = Buffer.from('- a\n'.repeat(250_000));
  const headers: Record<string, string> = { 'Content-Type': 'application/yaml', ...(key ? { Authorization: `Bearer ${key}` } : {}) };
  const answer = rawRequest(server.base, path, { method, headers, body, sendOnly: 4096 });
  const timeout = new Promise<string>((resolve) => setTimeout(() => resolve('no answer: the body is being read'), 3000).unref());
  return Promise.race([answer, timeout]);
}

const statusOf = (a: RawAnswer | string) => (typeof a === 'string' ? a : a.status);

describe('review: anonymous paths buffer bodies up to the 3 MB bound', () => {
  for (const [method, path] of [['POST', '/sync'], ['POST', '/healthz'], ['PUT', '/version'], ['POST', `${prefix}/version`]] as const) {
    it(`a keyless ${method} ${path} is answered without its body being read`, async () => {
      expect(statusOf(await partial(method, path))).toBeTypeOf('number');
    });
  }
});

describe('review: a key without the verb has its body read (and YAML decoded) when the method has no verb', () => {
  const probes: [string, () => string][] = [
    ['PUT', () => `${v1}/teams`],
    ['POST', () => `${v1}/teams/theirs`],
    ['DELETE', () => `${v1}/teams/theirs/status`],
    ['PUT', () => `${v1}/ownedaccesskeys/bob-key/rotation`],
    ['POST', () => `${prefix}/api/v1/events`],
    ['POST', () => `${prefix}/openapi/v2`],
    ['POST', () => `${prefix}/apis`],
    ['POST', () => '/metrics'],
  ];
  for (const [method, path] of probes) {
    it(`${method} ${path()} by a key without rights is refused before its body is read`, async () => {
      const a = await partial(method, path(), bobKey);
      expect(statusOf(a)).toBeTypeOf('number');
      expect([403, 404, 405]).toContain(statusOf(a));
    });
  }
});

describe('control', () => {
  it('PUT teams/theirs by bob is 403 before its body is read', async () => {
    expect(statusOf(await partial('PUT', `${v1}/teams/theirs`, bobKey))).toBe(403);
  });
  it('keyless POST /nope is 401 before its body', async () => {
    expect(statusOf(await partial('POST', '/nope'))).toBe(401);
  });
});

describe('review: the sign-in tie is cut by respelling its reference', () => {
  for (const apiVersion of ['elsewhere.example/v1', 'management.service/v2']) {
    it(`a key made with a Login key may not rewrite the tie's apiVersion to ${apiVersion}, and ends with the sign-in`, async () => {
      const minted = await mintLoginKey(server.registry, { username: 'lena', identity: { userId: 'u-lena', username: 'lena', connector: 'test', groups: [] } as never, ttlSeconds: 3600, requester: { username: 'lena' }, via: 'in a test' }, new Date());
      const login = await server.registry.ownedaccesskeys.get(minted.name);
      const auth = (key: string, type = 'application/json') => ({ Authorization: `Bearer ${key}`, 'Content-Type': type });
      const name = `lena-${apiVersion.split('.')[0]}`;
      const created = await fetch(`${server.api}/ownedaccesskeys`, { method: 'POST', headers: auth(minted.key), body: JSON.stringify({ metadata: { name }, spec: { user: 'lena', ttl: 600 } }) });
      expect(created.status).toBe(201);
      const made = (await created.json()) as { spec: { key: string }; metadata: { ownerReferences: unknown[] } };
      expect(made.metadata.ownerReferences).toEqual([{ apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', name: minted.name, uid: login.metadata.uid }]);
      // The same uid and name, another apiVersion: the admission plugin compares only uid and name,
      // while authentication and the garbage collector skip a reference that is not this API's.
      const respelt = await fetch(`${server.api}/ownedaccesskeys/${name}`, {
        method: 'PATCH',
        headers: auth(made.spec.key, 'application/merge-patch+json'),
        body: JSON.stringify({ metadata: { ownerReferences: [{ apiVersion, kind: 'OwnedAccessKey', name: minted.name, uid: login.metadata.uid }] } }),
      });
      // Sign out: the Login key is deleted.
      expect((await server.fetch(`${server.api}/ownedaccesskeys/${minted.name}`, { method: 'DELETE' })).status).toBe(200);
      const after = await fetch(`${server.api}/ownedaccesskeys/${name}`, { headers: auth(made.spec.key) });
      expect({ respelt: respelt.status, afterLogout: after.status }).toEqual({ respelt: 403, afterLogout: 401 });
    });
  }
});

describe('review: sign-in passes --max-keys-per-user by naming a key it does not replace', () => {
  let provider: TestProvider;
  let served: Served;
  let cli: CliStandIn;
  let api: ReturnType<typeof apiCaller>;

  beforeAll(async () => {
    provider = await startProvider();
    await provider.setUser('bob', { groups: ['everyone'] });
    served = await startServe([...oidcFlags(provider), '--max-keys-per-user', '2']);
    const cas = [readFileSync(provider.caFile), readFileSync(join(served.dir, 'tls', 'cert.pem'))];
    cli = await cliStandIn(new URL(served.url).origin, cas);
    api = apiCaller(served.url, '/apis/management.service/v1', cas);
  }, 60_000);
  afterAll(async () => {
    await cli?.close();
    await api?.close();
    await served?.stop();
    await provider?.stop();
  });

  it('a sign-in whose `replaces` names a key of the same user that is not a Login key is still counted: bob holds no more than 2 keys', async () => {
    const bob = signedInName(provider, 'bob');
    const made = await api(served.adminKey, 'POST', '/ownedaccesskeys', { apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', metadata: { name: 'bob-ci' }, spec: { user: bob, ttl: 3600 } });
    expect(made.status).toBe(201);
    expect((await cli.signIn('bob')).status).toBe(200);
    // The bound holds for a plain sign-in...
    expect((await cli.signIn('bob')).status).toBe(403);
    // ...but not for one that names bob-ci as the key it replaces: the quota leaves bob-ci out, and the mint then leaves bob-ci alone.
    const replacing = await cli.signIn('bob', 'bob-ci');
    const held = ((await api(served.adminKey, 'GET', '/ownedaccesskeys')).body.items as { spec: { user?: string } }[]).filter((k) => k.spec.user === bob).length;
    expect({ status: replacing.status, held }).toEqual({ status: 403, held: 2 });
  }, 60_000);
});
