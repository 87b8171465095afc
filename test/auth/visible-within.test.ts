/**
 * A restricted reader's list of access keys, of FederatedCredentials, of Teams and of AccessRequests
 * reads only where its objects can be: the visibility filter names the field-index values every
 * object it keeps carries (Authorizer.visible: keysWithin by `holder` and `team` for keys and by
 * `credentialFor` for FederatedCredentials, teamsWithin by `references`, requestsWithin by
 * `requester` and `requestTeam`), and the watch cache reads those objects instead of the kind.
 * Properties, over random teams (owners, access rules, approvers), keys (of users, teams, subjects),
 * FederatedCredentials (minting for users, teams), AccessRequests (of users, for teams) and callers
 * (users, team memberships, roles):
 * - every object the filter keeps carries one of those values (or the filter names none and the
 *   list reads the kind), by the real index functions;
 * - a list through the cache, page by page at random limits, gives the same objects as the same
 *   filter without the narrowing. */
import fc from 'fast-check';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { Matcher } from '../../src/api/selectors.js';
import type { KubeObject, Team } from '../../src/api/types.js';
import { Authorizer } from '../../src/auth/authorize.js';
import type { Identity } from '../../src/auth/identity.js';
import { TeamIndex } from '../../src/auth/team-index.js';
import { fieldIndexes, type FieldIndexName } from '../../src/registry/indexes.js';
import { createRegistry } from '../../src/registry/registry.js';
import type { ResourceRegistry } from '../../src/registry/resource-registry.js';
import { MemoryStore } from '../../src/store/backends/memory.js';
import { CachedStore } from '../../src/store/cache/cached-store.js';
import { fieldValues } from '../../src/store/cache/field-index.js';

const users = ['ana', 'bo', 'cy'];
const teamNames = ['t0', 't1', 't2', 't3'];
const verbs = ['get', 'update', 'delete', '*'];
const roles = ['management-admin', 'teams-admin', 'teams-viewer', 'teams-creator', 'accesskeys-admin', 'impersonator', 'cluster-reader'];

const teamSpec = fc.record({
  owner: fc.option(fc.oneof(fc.record({ user: fc.constantFrom(...users) }), fc.record({ team: fc.constantFrom(...teamNames) })), { nil: undefined }),
  access: fc.array(fc.record({ users: fc.subarray(users), teams: fc.subarray(teamNames), verbs: fc.subarray(verbs, { minLength: 1 }) }), { maxLength: 2 }),
  approvers: fc.subarray(users),
});
/** An AccessRequest's user and team (a team that may not exist). */
const requestSpec = fc.record({ user: fc.constantFrom(...users, 'dee'), team: fc.constantFrom(...teamNames, 'gone') });
const keySpec = fc.oneof(
  fc.record({ user: fc.constantFrom(...users, 'dee') }),
  fc.record({ team: fc.constantFrom(...teamNames, 'gone') }),
  fc.record({ user: fc.constantFrom(...users), team: fc.constantFrom(...teamNames) }),
  fc.record({ subject: fc.constantFrom('repo:org/app:ref:refs/heads/main', 'ana') }),
);
/** Whom a FederatedCredential's minted keys act for. */
const credentialSpec = fc.oneof(
  fc.record({ user: fc.constantFrom(...users, 'dee') }),
  fc.record({ team: fc.constantFrom(...teamNames, 'gone') }),
  fc.record({ user: fc.constantFrom(...users), team: fc.constantFrom(...teamNames) }),
);
const caller = fc.record({ user: fc.option(fc.constantFrom(...users), { nil: undefined }), teams: fc.subarray(teamNames), roles: fc.subarray(roles, { maxLength: 2 }) });
const world = fc.record({
  teams: fc.array(fc.tuple(fc.constantFrom(...teamNames), teamSpec), { maxLength: 4 }),
  keys: fc.array(keySpec, { maxLength: 24 }),
  requests: fc.array(requestSpec, { maxLength: 12 }),
  credentials: fc.array(credentialSpec, { maxLength: 12 }),
  callers: fc.array(caller, { minLength: 1, maxLength: 4 }),
  limit: fc.integer({ min: 0, max: 5 }),
});

const identity = (c: { user?: string; teams: string[]; roles: string[] }): Identity => ({
  name: c.user ?? 'team:t0',
  ...(c.user ? { user: c.user } : {}),
  groups: [],
  teams: c.teams,
  clusterRoles: new Set(c.roles),
  keyName: 'the-callers-key',
});

const stops: (() => void)[] = [];
afterEach(() => stops.splice(0).forEach((s) => s()));

/** A registry over a watch cache, and the team index authorization reads. */
async function served() {
  const store = new CachedStore(new MemoryStore(), { retryMs: 5 });
  const registry = createRegistry(store);
  const index = new TeamIndex(registry.teams, pino({ level: 'silent' }));
  await index.start();
  stops.push(() => index.stop());
  return { store, registry, index };
}

/** Straight into the store: the fixture is the key's spec, not what admission would allow. */
const putKey = (store: CachedStore, name: string, spec: object) =>
  store.create(`/ownedaccesskeys/${name}`, { apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', metadata: { name, uid: `uid-${name}`, creationTimestamp: '2026-11-01T00:00:00Z' }, spec });

describe("a restricted reader's key list", () => {
  it('reads only where the filter says its keys are, and lists the same keys as without the narrowing', async () => {
    const seen = { ownedaccesskeys: { narrowed: 0, kept: 0 }, federatedcredentials: { narrowed: 0, kept: 0 }, teams: { narrowed: 0, kept: 0 }, accessrequests: { narrowed: 0, kept: 0 } };
    await fc.assert(
      fc.asyncProperty(world, async (w) => {
        const { store, registry, index } = await served();
        try {
          for (const [name, spec] of w.teams) {
            const accessRequests = spec.approvers.length ? { accessRequests: { approvers: spec.approvers } } : {};
            const team = { apiVersion: 'management.service/v1', kind: 'Team', metadata: { name }, spec: { displayName: name, ...(spec.owner ? { owner: spec.owner } : {}), access: spec.access, ...accessRequests } } as unknown as Team;
            await registry.teams.apply(name, team, { fieldManager: 'test', force: true });
          }
          // Keys nobody generated here may see, among them: the cache narrows a list only when the
          // candidates are a small share of the kind (under an eighth).
          const fillers = Array.from({ length: 200 }, (_, i) => ({ user: `filler-${i % 7}` }));
          // Teams that name nobody generated here, for the same reason.
          for (let i = 0; i < 40; i++) await store.create(`/teams/filler-${String(i).padStart(2, '0')}`, { apiVersion: 'management.service/v1', kind: 'Team', metadata: { name: `filler-${String(i).padStart(2, '0')}`, uid: `uid-filler-${i}` }, spec: { owner: { user: 'nobody' } } });
          for (const [i, spec] of [...w.keys, ...fillers].entries()) {
            await putKey(store, `k${String(i).padStart(2, '0')}`, spec);
          }
          // AccessRequests, and requests of people and teams nobody generated here may see.
          const fillerRequests = Array.from({ length: 120 }, (_, i) => ({ user: `filler-${i % 7}`, team: `filler-${String(i % 40).padStart(2, '0')}` }));
          for (const [i, spec] of [...w.requests, ...fillerRequests].entries()) {
            const name = `r${String(i).padStart(3, '0')}`;
            await store.create(`/accessrequests/${name}`, { apiVersion: 'management.service/v1', kind: 'AccessRequest', metadata: { name, uid: `uid-${name}` }, spec: { ...spec, reason: 'test' } });
          }
          // FederatedCredentials, and rules minting for people nobody generated here may see.
          const fillerCredentials = Array.from({ length: 120 }, (_, i) => ({ user: `filler-${i % 7}` }));
          for (const [i, spec] of [...w.credentials, ...fillerCredentials].entries()) {
            const name = `f${String(i).padStart(3, '0')}`;
            await store.create(`/federatedcredentials/${name}`, { apiVersion: 'management.service/v1', kind: 'FederatedCredential', metadata: { name, uid: `uid-${name}` }, spec: { ...spec, issuer: 'https://token.actions.example', audiences: ['teamkeys'], claims: { repository: 'org/app' } } });
          }
          await index.caughtUp();
          expect(await store.ready(5000)).toBe(true);
          const authz = new Authorizer(index, 'management.service');
          const all = (await registry.ownedaccesskeys.list()).items;
          const allTeams = (await registry.teams.list()).items;
          const allRequests = (await registry.accessrequests.list()).items;
          const allCredentials = (await registry.federatedcredentials.list()).items;
          for (const c of w.callers) {
            const listed = {
              ownedaccesskeys: { registry: registry.ownedaccesskeys, all },
              federatedcredentials: { registry: registry.federatedcredentials, all: allCredentials },
              teams: { registry: registry.teams, all: allTeams },
              accessrequests: { registry: registry.accessrequests, all: allRequests },
            };
            for (const resource of ['ownedaccesskeys', 'federatedcredentials', 'teams', 'accessrequests'] as const) {
              // Keys and FederatedCredentials: its own and its teams'. Teams: those whose owner or access rules name the caller
              // or its teams. AccessRequests: its own, and those of the teams whose requests it approves.
              const filter = authz.visible(identity(c), resource);
              const within = filter.within?.();
              const visible = listed[resource].all.filter(filter);
              seen[resource].kept += visible.length;
              if (within) {
                seen[resource].narrowed++;
                for (const o of visible) {
                  const carries = within.some((l) => fieldValues(fieldIndexes[l.index as FieldIndexName](`/${resource}/${o.metadata.name}`, o)).includes(l.value));
                  expect(carries, `${resource} ${o.metadata.name} ${JSON.stringify(o.spec)} outside ${JSON.stringify(within)}`).toBe(true);
                }
              }
              // The same filter without its narrowing: what the list read before.
              const plain: Matcher = (obj) => filter(obj);
              expect(await pages(listed[resource].registry, filter, w.limit)).toEqual(await pages(listed[resource].registry, plain, w.limit));
              expect(await pages(listed[resource].registry, filter, w.limit)).toEqual(visible.map((o) => o.metadata.name));
            }
          }
        } finally {
          index.stop();
          await store.close();
        }
      }),
      { numRuns: 50, interruptAfterTimeLimit: 60_000, markInterruptAsFailure: true },
    );
    // The generated callers were often restricted, and saw keys.
    expect(seen.ownedaccesskeys.narrowed).toBeGreaterThan(25);
    expect(seen.ownedaccesskeys.kept).toBeGreaterThan(50);
    expect(seen.federatedcredentials.narrowed).toBeGreaterThan(25);
    expect(seen.federatedcredentials.kept).toBeGreaterThan(20);
    expect(seen.teams.narrowed).toBeGreaterThan(25);
    expect(seen.teams.kept).toBeGreaterThan(20);
    expect(seen.accessrequests.narrowed).toBeGreaterThan(25);
    expect(seen.accessrequests.kept).toBeGreaterThan(20);
  }, 90_000);
});

describe("a restricted reader's key list, rights changed meanwhile", () => {
  it('follows the rights and the keys as the read finds them: a team given to the reader after its filter was made, a key made since', async () => {
    const { store, registry, index } = await served();
    try {
      const team = (owner: string) => ({ apiVersion: 'management.service/v1', kind: 'Team', metadata: { name: 't1' }, spec: { displayName: 't1', owner: { user: owner } } }) as unknown as Team;
      await registry.teams.apply('t1', team('bo'), { fieldManager: 'test', force: true });
      const keys = [{ team: 't1' }, ...Array.from({ length: 100 }, (_, i) => ({ user: `filler-${i % 7}` }))];
      for (const [i, spec] of keys.entries()) {
        await putKey(store, `k${String(i).padStart(3, '0')}`, spec);
      }
      await index.caughtUp();
      expect(await store.ready(5000)).toBe(true);
      // Made as the request is authenticated; the grant lands while the list waits for its revision.
      const filter = new Authorizer(index, 'management.service').visible(identity({ user: 'ana', teams: [], roles: [] }), 'ownedaccesskeys');
      await registry.teams.apply('t1', team('ana'), { fieldManager: 'test', force: true });
      await index.caughtUp();
      expect(await pages(registry.ownedaccesskeys, filter, 0)).toEqual(['k000']);
      // A key made since: the next list, at a later revision, has it (nothing kept from the last one).
      await putKey(store, 'k500', { team: 't1' });
      expect(await pages(registry.ownedaccesskeys, filter, 0)).toEqual(['k000', 'k500']);
    } finally {
      index.stop();
      await store.close();
    }
  });
});

/** Every page of the list, as the JSON path (listJson) and the object path (list) give them: the names, in order. */
async function pages(keys: ResourceRegistry, filter: Matcher, limit: number): Promise<string[]> {
  const names: string[] = [];
  let next: string | undefined;
  do {
    const page = await keys.list({ filter, limit, ...(next ? { continue: next } : {}) });
    const json = await keys.listJson({ filter, limit, ...(next ? { continue: next } : {}) }, false);
    const fromJson = json ? (JSON.parse(json.toString()) as { items: KubeObject[]; metadata: { continue?: string } }) : undefined;
    if (fromJson) expect(fromJson.items.map((k) => k.metadata.name)).toEqual(page.items.map((k) => k.metadata.name));
    names.push(...page.items.map((k) => k.metadata.name!));
    next = page.metadata.continue;
  } while (next);
  return names;
}
