/**
 * The FederatedCredential kind served like the others: discovery, create/get/list with the table,
 * schema and rule validation (422 naming fields), and writing a rule judged as creating the key it
 * mints (403 for a writer who could not create that key).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcess } from '../support/in-process.js';
import { create } from '../auth/fixture.js';
import { Writable } from 'node:stream';
import pino from 'pino';
import { storedRuleRefusal } from '../../src/federation/exchange.js';
import { refusedStoredRules, storedRulesCheck } from '../../src/federation/stored-rules.js';
import { createRegistry } from '../../src/registry/registry.js';
import { CachedStore } from '../../src/store/cache/cached-store.js';
import { MemoryStore } from '../../src/store/backends/memory.js';
import { eventually } from '../support/eventually.js';
import type { FederatedCredential } from '../../src/api/types.js';

const value = (name: string) => `Value${name.replace(/[^A-Za-z0-9]/g, '')}${'q'.repeat(40)}`;
export const rule = (name: string, spec: Record<string, unknown>) => ({
  apiVersion: 'management.service/v1',
  kind: 'FederatedCredential',
  metadata: { name },
  spec: { issuer: 'https://token.actions.githubusercontent.com', audiences: ['teamkeys'], claims: { repository: 'acme/app' }, ...spec },
});

const rulesOnly = { rules: [{ verbs: ['create'], resources: [{ group: 'management.service', resources: ['federatedcredentials'] }] }] };

describe('FederatedCredential served as a kind', () => {
  let server: InProcess;
  const write = async (body: unknown, token?: string) => {
    const res = await create(server, 'federatedcredentials', body, token);
    return { status: res.status, body: (await res.json()) as { message?: string; reason?: string; details?: { causes?: { field: string; message: string }[] }; metadata?: { ownerReferences?: { kind: string; name: string }[] } } };
  };

  beforeAll(async () => {
    server = await startInProcess();
    for (const [name, spec] of Object.entries({ payments: { users: ['ana'] }, ops: { users: ['ana'], access: [{ verbs: ['get'], users: ['bob'] }] } })) {
      expect((await create(server, 'teams', { metadata: { name }, spec })).status).toBe(201);
    }
    // bob may update payments (so manage its keys), not ops; ana may update neither.
    expect((await server.fetch(`${server.api}/teams/payments`, { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ spec: { access: [{ verbs: ['get', 'update'], users: ['bob'] }] } }) })).status).toBe(200);
    for (const user of ['ana', 'bob']) expect((await create(server, 'ownedaccesskeys', { metadata: { name: user }, spec: { user, key: value(user) } })).status).toBe(201);
    const narrow = { user: 'bob', ttl: 3600, scope: rulesOnly, key: value('bob-narrow') };
    expect((await create(server, 'ownedaccesskeys', { metadata: { name: 'bob-narrow' }, spec: narrow })).status).toBe(201);
  });
  afterAll(() => server.close());

  it('is listed by discovery with its short name', async () => {
    const res = (await (await server.fetch(`${server.api}`)).json()) as { resources: { name: string; kind: string; shortNames?: string[]; verbs: string[] }[] };
    const fc = res.resources.find((r) => r.name === 'federatedcredentials');
    expect(fc).toMatchObject({ kind: 'FederatedCredential', shortNames: ['fedcred'] });
    expect(fc!.verbs).toEqual(expect.arrayContaining(['create', 'get', 'list', 'watch', 'patch', 'delete']));
  });

  it('is created, read back bound to its team, and listed as a table', async () => {
    const made = await write(rule('payments-ci', { team: 'payments', scope: { roles: [{ role: 'cli' }] }, ttl: 900 }));
    expect(made.status).toBe(201);
    expect(made.body.metadata?.ownerReferences).toEqual([expect.objectContaining({ kind: 'Team', name: 'payments' })]);
    const got = await server.fetch(`${server.api}/federatedcredentials/payments-ci`);
    expect(got.status).toBe(200);
    expect(((await got.json()) as { spec: { ttl: number } }).spec.ttl).toBe(900);
    const table = (await (await server.fetch(`${server.api}/federatedcredentials`, { headers: { Accept: 'application/json;as=Table;v=v1;g=meta.k8s.io' } })).json()) as { columnDefinitions: { name: string }[]; rows: { cells: unknown[] }[] };
    expect(table.columnDefinitions.map((c) => c.name)).toEqual(['Name', 'Display Name', 'Issuer', 'User', 'Team', 'TTL', 'Age', 'Audiences']);
    expect(table.rows[0]!.cells.slice(0, 6)).toEqual(['payments-ci', null, 'https://token.actions.githubusercontent.com', null, 'payments', 900]);
  });

  it('refuses a rule that is not one, naming each field (422)', async () => {
    const bad = await write(rule('bad', { issuer: 'http://issuer.example', claims: { aud: 'x', ref: '' }, team: 'payments', user: 'ana', ttl: 5 }));
    expect(bad.status).toBe(422);
    const causes = bad.body.details!.causes!.map((c) => `${c.field}: ${c.message}`);
    expect(causes).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^spec\.ttl: .*60/),
        expect.stringMatching(/^spec\.issuer: Invalid value: "http:\/\/issuer\.example": must be an https URL/),
        expect.stringMatching(/^spec\.user: .*exactly one of spec\.team or spec\.user/),
        expect.stringMatching(/^spec\.claims\.aud: Forbidden: aud is checked by the exchange itself/),
        expect.stringMatching(/^spec\.claims\.ref: .*may not be empty/),
      ]),
    );
    const pinsNothing = await write(rule('loose', { claims: { repository: '*' }, team: 'payments' }));
    expect(pinsNothing.status).toBe(422);
    expect(pinsNothing.body.details!.causes![0]!.message).toContain('must pin at least one claim');
    const noTeam = await write(rule('orphan', { team: 'nowhere' }));
    expect(noTeam.status).toBe(422);
    expect(noTeam.body.details!.causes![0]!.message).toContain('team "nowhere" does not exist');
  });

  // Found by a review (stop 63): `ref: refs/*` passed "pins something" and trusted every
  // repository's jobs on GitHub; a public issuer's rule must pin whose jobs these are.
  it("a rule for a public issuer must pin the jobs' owner, exactly or by a glob keeping it; a private issuer's need not", async () => {
    const gitlab = 'https://gitlab.com';
    const cases: [string, Record<string, unknown>, number][] = [
      ['gh-any-repo', { claims: { ref: 'refs/*', event_name: 'push' } }, 422],
      ['gh-any-sub', { claims: { sub: 'repo:*', ref: 'refs/heads/main' } }, 422],
      ['gh-any-owner', { claims: { repository: '*/app', ref: 'refs/heads/main' } }, 422],
      ['gh-owner-glob', { claims: { repository: 'acme/*' } }, 201],
      ['gh-sub-glob', { claims: { sub: 'repo:acme/*' } }, 201],
      ['gh-ids', { claims: { repository_id: '1001', ref: 'refs/*' } }, 201],
      ['gh-enterprise', { issuer: 'https://token.actions.githubusercontent.com/acme-corp', claims: { workflow: 'ci' } }, 422],
      ['gl-any', { issuer: gitlab, claims: { ref: 'main', ref_protected: 'true' } }, 422],
      ['gl-group', { issuer: gitlab, claims: { project_path: 'platform/*' } }, 201],
      ['private-ci', { issuer: 'https://ci.acme.internal', claims: { ref: 'refs/heads/main' } }, 201],
      // A reusable workflow is callable by any repository, whose token then names the caller: no owner pin.
      ['gh-reusable', { claims: { job_workflow_ref: 'acme/shared/.github/workflows/teamkeys.yml@refs/heads/main' } }, 422],
      ['bk-any-org', { issuer: 'https://agent.buildkite.com', claims: { pipeline_slug: 'deploy' } }, 422],
      ['bk-org', { issuer: 'https://agent.buildkite.com', claims: { organization_slug: 'acme', pipeline_slug: 'deploy' } }, 201],
      ['tfc-any-org', { issuer: 'https://app.terraform.io', claims: { terraform_workspace_name: 'prod' } }, 422],
      ['tfc-sub', { issuer: 'https://app.terraform.io', claims: { sub: 'organization:acme:*' } }, 201],
    ];
    for (const [name, spec, status] of cases) {
      const res = await write(rule(name, { team: 'payments', ...spec }));
      expect(res.status, `${name}: ${JSON.stringify(res.body)}`).toBe(status);
      if (status === 422) expect(res.body.details!.causes!.map((c) => `${c.field}: ${c.message}`)).toEqual([expect.stringMatching(/^spec\.claims: Required value: (GitHub Actions|GitLab\.com|Buildkite|Terraform Cloud) signs tokens for anyone's jobs: pin whose jobs these are with one of /)]);
    }
  });

  it('a rule stored before owner pins were required stays writable where its issuer and claims stay as they are; changing them needs the pin', async () => {
    const store = server.registry.federatedcredentials.ctx.store;
    const stored = { apiVersion: 'management.service/v1', kind: 'FederatedCredential', metadata: { name: 'before-pins', uid: 'uid-before-pins', creationTimestamp: '2026-11-01T00:00:00Z', finalizers: ['example.com/hold'] }, spec: { issuer: 'https://token.actions.githubusercontent.com', audiences: ['teamkeys'], claims: { ref: 'refs/heads/main' }, team: 'payments' } };
    await store.create('/federatedcredentials/before-pins', stored as unknown as Parameters<typeof store.create>[1]);
    const patch = (body: unknown) => server.fetch(`${server.api}/federatedcredentials/before-pins`, { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify(body) });
    expect((await patch({ metadata: { labels: { audit: 'found' }, finalizers: null } })).status).toBe(200);
    const still = await patch({ spec: { claims: { ref: 'refs/heads/release' } } });
    expect(still.status).toBe(422);
    expect(((await still.json()) as { message: string }).message).toContain("GitHub Actions signs tokens for anyone's jobs");
    // The leader names it to the operator (stored-rules.ts) until it pins the jobs' owner.
    expect((await refusedStoredRules(server.registry))?.map((r) => r.name)).toEqual(['before-pins']);
    expect((await patch({ spec: { claims: { repository_id: '1001' } } })).status).toBe(200);
    expect(await refusedStoredRules(server.registry)).toEqual([]);
    // Until then the exchange does not use it (its issuer is GitHub's, so this is judged without a token).
    const rule = (spec: Record<string, unknown>) => ({ ...stored, spec: { ...stored.spec, ...spec } }) as unknown as FederatedCredential;
    expect(storedRuleRefusal(rule({}))).toMatch(/^the FederatedCredential matching the token was stored before rules had to pin whose jobs they trust, and is not used until it does: GitHub Actions signs tokens for anyone's jobs/);
    expect(storedRuleRefusal(rule({ claims: { repository_owner_id: '2002', ref: 'refs/heads/main' } }))).toBeUndefined();
    expect(storedRuleRefusal(rule({ issuer: 'https://ci.acme.internal' }))).toBeUndefined();
  });

  it('a server starting on a store holding such a rule logs it once its leader starts, by name and reason', async () => {
    const store = new CachedStore(new MemoryStore());
    const stored = { apiVersion: 'management.service/v1', kind: 'FederatedCredential', metadata: { name: 'unpinned-rule', uid: 'uid-unpinned', creationTimestamp: '2026-11-01T00:00:00Z' }, spec: { issuer: 'https://gitlab.com', audiences: ['teamkeys'], claims: { ref: 'main' }, user: 'ana' } };
    await store.create('/federatedcredentials/unpinned-rule', stored as unknown as Parameters<typeof store.create>[1]);
    const logged: { msg: string; federatedCredential?: string; reason?: string }[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _e, done) => done(void logged.push(JSON.parse(chunk.toString()) as (typeof logged)[number])) });
    const other = await startInProcess({ store, logger: pino({ level: 'warn' }, sink) });
    try {
      await eventually('the leader logs the unpinned rule', () => logged.some((l) => l.federatedCredential));
      expect(logged.filter((l) => l.federatedCredential)).toEqual([expect.objectContaining({ msg: 'a stored FederatedCredential is not used by the token exchange until it is changed', federatedCredential: 'unpinned-rule', reason: expect.stringContaining("GitLab.com signs tokens for anyone's jobs") })]);
    } finally {
      await other.close();
    }
  });

  it('the check stops between pages when the lease is lost, and a lease lost and taken again at once logs each rule once', async () => {
    const store = new CachedStore(new MemoryStore());
    for (let i = 0; i < 501; i++) {
      const name = `unpinned-${String(i).padStart(3, '0')}`;
      await store.create(`/federatedcredentials/${name}`, { apiVersion: 'management.service/v1', kind: 'FederatedCredential', metadata: { name, uid: `uid-${name}`, creationTimestamp: '2026-11-01T00:00:00Z' }, spec: { issuer: 'https://gitlab.com', audiences: ['teamkeys'], claims: { ref: 'main' }, user: 'ana' } } as unknown as Parameters<typeof store.create>[1]);
    }
    const registry = createRegistry(store);
    // Cancelled after the first page of 500: the second page is not read, and nothing is returned.
    let pages = 0;
    expect(await refusedStoredRules(registry, () => pages++ >= 1)).toBeUndefined();
    expect(pages).toBe(2);
    expect((await refusedStoredRules(registry))?.length).toBe(501);
    const logged: { federatedCredential?: string }[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _e, done) => done(void logged.push(JSON.parse(chunk.toString()) as (typeof logged)[number])) });
    const work = storedRulesCheck(registry, pino({ level: 'warn' }, sink));
    work.start();
    work.stop();
    work.start();
    await eventually('the second check logs the rules', () => logged.length >= 501);
    await new Promise((r) => setTimeout(r, 50));
    expect(logged.filter((l) => l.federatedCredential === 'unpinned-000').length).toBe(1);
    expect(logged.length).toBe(501);
    work.stop();
  });

  it('a writer who may create the key it mints may write the rule; one who may not is refused (403)', async () => {
    // bob may update payments, so he may make its keys, and rules minting them.
    expect((await write(rule('bob-payments', { team: 'payments' }), value('bob'))).status).toBe(201);
    // He may not update ops: no key of ops, and no rule for it.
    const ops = await write(rule('bob-ops', { team: 'ops' }), value('bob'));
    expect(ops.status).toBe(403);
    expect(ops.body.message).toContain('keys of team "ops" are managed by those who may update the team');
    // ana is a member of payments, not its manager: she may make none of its keys.
    const ana = await write(rule('ana-payments', { team: 'payments' }), value('ana'));
    expect(ana.status).toBe(403);
    expect(ana.body.message).toContain('keys of team "payments" are managed by those who may update the team');
    // Her own keys she may make: a rule minting keys for her is hers to write, for no one else.
    expect((await write(rule('ana-self', { user: 'ana' }), value('ana'))).status).toBe(201);
    const other = await write(rule('ana-for-bob', { user: 'bob' }), value('ana'));
    expect(other.status).toBe(403);
    expect(other.body.message).toContain('keys for another user ("bob") require the accesskeys-admin role');
  });

  it('a scoped, expiring key writes no rule minting wider or longer-lived keys than itself', async () => {
    const wider = await write(rule('narrow-wide', { user: 'bob' }), value('bob-narrow'));
    expect(wider.status).toBe(403);
    expect(wider.body.message).toContain("needs a scope within that key's scope");
    // Within its scope, and each minted key lives 10 minutes, but the rule mints them for as long as
    // it exists: after the writer's key has expired too.
    const longer = await write(rule('narrow-long', { user: 'bob', scope: rulesOnly, ttl: 600 }), value('bob-narrow'));
    expect(longer.status).toBe(403);
    expect(longer.body.message).toContain('must expire no later');
  });

  it('a change to a rule is judged as a new grant: widening its claims needs the rights again', async () => {
    const res = await server.fetch(`${server.api}/federatedcredentials/payments-ci`, {
      method: 'PATCH',
      headers: { Authorization: `Bearer ${value('ana')}`, 'Content-Type': 'application/merge-patch+json' },
      body: JSON.stringify({ spec: { claims: { repository: 'acme/*' } } }),
    });
    expect(res.status).toBe(403);
  });
});
