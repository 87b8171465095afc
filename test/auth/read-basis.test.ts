/**
 * The read basis (authorize.ts readBasis) an open watch is held to: a change of it ends the watch
 * with 410, so it must change whenever what the watcher may read can change (soundness), and a
 * watch of AccessRequests must not end for a change that decides only who reads keys (the update
 * right on a team). Property: over random teams and one random team write, an unchanged basis
 * means every object of the kind is as visible as before.
 */
import fc from 'fast-check';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { KubeObject, Team } from '../../src/api/types.js';
import { Authorizer } from '../../src/auth/authorize.js';
import type { Identity } from '../../src/auth/identity.js';
import { TeamIndex } from '../../src/auth/team-index.js';
import { createRegistry } from '../../src/registry/registry.js';
import { MemoryStore } from '../../src/store/backends/memory.js';

const group = 'management.service';
const users = ['ana', 'bo'];
const teamNames = ['t0', 't1', 't2'];
const resources = ['ownedaccesskeys', 'federatedcredentials', 'accessrequests'] as const;

const identity = (user: string, teams: string[] = []): Identity => ({ name: user, user, groups: [], teams, clusterRoles: new Set(), keyName: `${user}-key` });

const team = (name: string, spec: Record<string, unknown>): Team => ({ apiVersion: `${group}/v1`, kind: 'Team', metadata: { name }, spec: { displayName: name, ...spec } }) as unknown as Team;

/** One object of each kind per team and per user, as readers meet them. */
const objects: Record<(typeof resources)[number], KubeObject[]> = {
  ownedaccesskeys: [...teamNames.map((t) => ({ spec: { team: t } })), ...users.map((u) => ({ spec: { user: u } }))].map((o, i) => ({ apiVersion: `${group}/v1`, kind: 'OwnedAccessKey', metadata: { name: `k${i}` }, ...o })),
  federatedcredentials: [...teamNames.map((t) => ({ spec: { team: t } })), ...users.map((u) => ({ spec: { user: u } }))].map((o, i) => ({ apiVersion: `${group}/v1`, kind: 'FederatedCredential', metadata: { name: `f${i}` }, ...o })),
  accessrequests: teamNames.flatMap((t) => users.map((u) => ({ spec: { team: t, user: u } }))).map((o, i) => ({ apiVersion: `${group}/v1`, kind: 'AccessRequest', metadata: { name: `r${i}` }, ...o })),
};

const stops: (() => void)[] = [];
afterEach(() => stops.splice(0).forEach((s) => s()));

async function world() {
  const registry = createRegistry(new MemoryStore());
  const index = new TeamIndex(registry.teams, pino({ level: 'silent' }));
  await index.start();
  stops.push(() => index.stop());
  const authz = new Authorizer(index, group);
  const write = async (t: Team) => {
    await registry.teams.apply(t.metadata.name!, t, { fieldManager: 'test', force: true });
    await index.caughtUp();
  };
  return { authz, write };
}

const teamSpec = fc.record({
  owner: fc.option(fc.record({ user: fc.constantFrom(...users) }), { nil: undefined }),
  users: fc.subarray(users),
  access: fc.array(fc.record({ users: fc.subarray(users, { minLength: 1 }), verbs: fc.subarray(['get', 'update'], { minLength: 1 }) }), { maxLength: 2 }),
  approvers: fc.subarray(users),
  displayName: fc.constantFrom('a', 'b'),
});
type TeamSpec = typeof teamSpec extends fc.Arbitrary<infer T> ? T : never;
const specOf = (s: TeamSpec) => ({ displayName: s.displayName, users: s.users, ...(s.owner ? { owner: s.owner } : {}), access: s.access, accessRequests: { approvers: s.approvers } });

describe('read basis', () => {
  it("a change to a team whose keys a user reads (by the update right) ends the user's key watches, not its AccessRequests watch", async () => {
    const { authz, write } = await world();
    await write(team('ops', { access: [{ users: ['ana'], verbs: ['update'] }] }));
    const ana = identity('ana');
    const before = Object.fromEntries(resources.map((r) => [r, authz.readBasis(ana, r)]));
    await write(team('ops', { displayName: 'Operations', access: [{ users: ['ana'], verbs: ['update'] }] }));
    expect(authz.readBasis(ana, 'ownedaccesskeys')).not.toBe(before.ownedaccesskeys);
    expect(authz.readBasis(ana, 'federatedcredentials')).not.toBe(before.federatedcredentials);
    expect(authz.readBasis(ana, 'accessrequests')).toBe(before.accessrequests);
    // Named an approver, she reads the team's requests from then on: that does change it.
    await write(team('ops', { displayName: 'Operations', access: [{ users: ['ana'], verbs: ['update'] }], accessRequests: { approvers: ['ana'] } }));
    expect(authz.readBasis(ana, 'accessrequests')).not.toBe(before.accessrequests);
  });

  it('an unchanged basis means nothing of the kind became visible or invisible (random teams, one random write)', async () => {
    let unchanged = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.constantFrom(...teamNames), teamSpec), { maxLength: 4 }), fc.constantFrom(...teamNames), teamSpec, async (initial, target, next) => {
        const { authz, write } = await world();
        for (const [name, spec] of initial) await write(team(name, specOf(spec)));
        const callers = users.flatMap((u) => [identity(u), identity(u, ['t0'])]);
        const seen = () => callers.map((who) => resources.map((r) => ({ basis: authz.readBasis(who, r), reads: objects[r].map(authz.visible(who, r)) })));
        const before = seen();
        await write(team(target, specOf(next)));
        const after = seen();
        before.forEach((perCaller, c) =>
          perCaller.forEach((b, r) => {
            if (b.basis !== after[c]![r]!.basis) return;
            unchanged++;
            expect(after[c]![r]!.reads, `${callers[c]!.name} ${resources[r]}`).toEqual(b.reads);
          }),
        );
      }),
      { numRuns: 60 },
    );
    expect(unchanged).toBeGreaterThan(50);
  });
});
