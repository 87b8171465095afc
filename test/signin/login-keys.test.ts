/**
 * Login keys belong to sign-in: the API refuses to make one or to write its identity (admins
 * included); their owner lists and deletes them; a refused refresh or a stale identity fails
 * authentication with its reason; the reconciler never plans, prunes or imports them.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OwnedAccessKey } from '../../src/api/types.js';
import { refusedAnnotation } from '../../src/auth/login-keys.js';
import { EmbeddedClient } from '../../src/client/embedded.js';
import { importObjects } from '../../src/gitops/import.js';
import { reconcile } from '../../src/gitops/reconcile.js';
import { mintLoginKey, type MintedKey } from '../../src/signin/mint.js';
import { create, json } from '../auth/fixture.js';
import { startInProcess, type InProcess } from '../server/in-process.js';

let server: InProcess;
let ana: MintedKey;
let adminMade: string;

const identity = { userId: 'u-ana', username: 'ana', groups: ['payments-devs'], connector: 'oidc', connectorData: '{"refreshToken":"rt-secret-value"}' };
const mint = (at = new Date()) => mintLoginKey(server.registry, { username: 'ana', identity, ttlSeconds: 3600, requester: { username: 'ana' }, via: 'in a test' }, at);
const as = (key: string) => ({ ...json, Authorization: `Bearer ${key}` });
const keyUrl = (name: string) => `${server.api}/ownedaccesskeys/${name}`;
const patch = (name: string, body: unknown, key?: string) =>
  server.fetch(keyUrl(name), { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json', ...(key ? { Authorization: `Bearer ${key}` } : {}) }, body: JSON.stringify(body) });
const teamsAs = (key: string) => fetch(`${server.api}/teams`, { headers: as(key) });

describe('Login keys belong to sign-in', () => {
  beforeAll(async () => {
    server = await startInProcess();
    ana = await mint();
    const res = await create(server, 'ownedaccesskeys', { metadata: { name: 'ana-laptop' }, spec: { user: 'ana' } });
    adminMade = ((await res.json()) as { spec: { key: string } }).spec.key;
  });
  afterAll(() => server.close());

  it('the API refuses to create a key of type Login, to anyone (403 naming sign-in)', async () => {
    for (const token of [undefined, adminMade]) {
      const res = await create(server, 'ownedaccesskeys', { metadata: { name: 'fake-login' }, spec: { user: 'ana', type: 'Login', identity: { username: 'ana', groups: ['admins'] } } }, token);
      expect(res.status).toBe(403);
      expect(((await res.json()) as { message: string }).message).toContain('access keys of type Login are made only by signing in (teamkeys login)');
    }
  });

  it("the API refuses to write a Login key's identity, refresh time, refresh markers or type, even for management-admin", async () => {
    const writes = [
      { spec: { identity: { groups: ['admins'] } } },
      { spec: { identityRefresh: '2099-01-01T00:00:00Z' } },
      { metadata: { annotations: { [refusedAnnotation]: 'x' } } },
      { spec: { type: 'User' } },
    ];
    for (const body of writes) {
      const res = await patch(ana.name, body);
      expect(res.status, JSON.stringify(body)).toBe(403);
      expect(((await res.json()) as { message: string }).message).toMatch(/written only by signing in|set only by signing in/);
    }
    const res = await patch('ana-laptop', { spec: { type: 'Login' } });
    expect(res.status).toBe(403);
  });

  it('its owner may describe, list and delete it; the list shows the type', async () => {
    expect((await patch(ana.name, { spec: { description: 'my laptop' } }, ana.key)).status).toBe(200);
    const list = (await (await fetch(`${server.api}/ownedaccesskeys`, { headers: as(ana.key) })).json()) as { items: OwnedAccessKey[] };
    expect(list.items.map((k) => [k.metadata.name, k.spec.type])).toEqual(expect.arrayContaining([[ana.name, 'Login']]));
    expect(JSON.stringify(list)).not.toContain('rt-secret-value');
    const table = (await (await fetch(`${server.api}/ownedaccesskeys`, { headers: { ...as(ana.key), Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } })).json()) as { columnDefinitions: { name: string }[] };
    expect(table.columnDefinitions.map((c) => c.name)).toEqual(expect.arrayContaining(['Type']));
    const other = await mint();
    expect((await fetch(keyUrl(other.name), { method: 'DELETE', headers: as(ana.key) })).status).toBe(200);
  });

  it('a refused refresh makes the key fail authentication with the reason', async () => {
    const key = await mint();
    expect((await teamsAs(key.key)).status).toBe(200);
    const current = (await server.registry.ownedaccesskeys.get(key.name)) as OwnedAccessKey;
    await server.registry.ownedaccesskeys.update(key.name, { ...current, metadata: { ...current.metadata, annotations: { [refusedAnnotation]: 'invalid_grant' } } }, { fieldManager: 'teamkeys-signin' });
    const res = await teamsAs(key.key);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { message: string }).message).toBe('the identity provider refused to refresh this sign-in: run teamkeys login');
  });

  it('an identity not refreshed for longer than the maximum staleness (24 h) fails closed, saying since when', async () => {
    const stale = await mint(new Date(Date.now() - 25 * 3600_000));
    const res = await teamsAs(stale.key);
    expect(res.status).toBe(401);
    expect(((await res.json()) as { message: string }).message).toMatch(/^the identity of this sign-in has not been refreshed since \d{4}-.*, longer than the server allows: run teamkeys login$/);
  });

  describe('the reconciler', () => {
    const dir = mkdtempSync(join(tmpdir(), 'teamkeys-login-gitops-'));
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    it('neither plans, prunes nor reports Login keys, and refuses them in git', async () => {
      const client = new EmbeddedClient(server.registry, 'memory:');
      writeFileSync(join(dir, 'team.yaml'), 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: gitops-only\nspec:\n  users: [bo]\n');
      const opts = { source: { source: dir, sourceId: 'test-source' }, client, concurrency: 1, prune: true, allowEmpty: false, maxPrune: 50 };
      const run = await reconcile({ ...opts, mode: 'apply' });
      expect(run.report.objects.map((o) => `${o.kind}/${o.name}`)).not.toContain(`OwnedAccessKey/${ana.name}`);
      expect(await server.registry.ownedaccesskeys.get(ana.name)).toBeDefined();
      writeFileSync(join(dir, 'login.yaml'), 'apiVersion: management.service/v1\nkind: OwnedAccessKey\nmetadata:\n  name: from-git\nspec:\n  user: bo\n  type: Login\n');
      const refused = await reconcile({ ...opts, mode: 'plan' });
      expect(refused.report.errors.map((e) => e.message)).toContain('spec.type Login is for keys made by signing in (teamkeys login); they are not kept in git');
    });

    it('import skips Login keys, saying why', async () => {
      const imported = await importObjects(new EmbeddedClient(server.registry, 'memory:'), { all: true });
      expect(imported.files.map((f) => f.path)).not.toContain(`ownedaccesskeys/${ana.name}.yaml`);
      expect(imported.skipped).toContainEqual({ kind: 'OwnedAccessKey', name: ana.name, reason: 'a Login key: made by signing in, not kept in git' });
    });
  });
});
