/**
 * The team index answers "which teams name this principal" from an index, so an escalation
 * decision never walks every team. Property: for random teams, writes and deletes, what a
 * principal holds (grantsOf) through the index equals what the walk over every team gives, for
 * the index itself and for the index with one team replaced (how a write is judged).
 */
import fc from 'fast-check';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { Team } from '../../src/api/types.js';
import { Authorizer } from '../../src/auth/authorize.js';
import { grantsOf, withTeam, type TeamWorld } from '../../src/auth/grants.js';
import { TeamIndex } from '../../src/auth/team-index.js';
import { createRegistry } from '../../src/registry/registry.js';
import { MemoryStore } from '../../src/store/backends/memory.js';

const users = ['ana', 'bo', 'cy'];
const teamNames = ['t0', 't1', 't2', 't3', 't4'];
const verbs = ['get', 'update', 'delete', '*'];

const teamSpec = fc.record({
  owner: fc.option(fc.oneof(fc.record({ user: fc.constantFrom(...users) }), fc.record({ team: fc.constantFrom(...teamNames) })), { nil: undefined }),
  access: fc.array(
    fc.record({
      users: fc.subarray(users),
      teams: fc.subarray(teamNames),
      verbs: fc.subarray(verbs, { minLength: 1 }),
    }),
    { maxLength: 2 },
  ),
  users: fc.subarray(users),
});
type Spec = typeof teamSpec extends fc.Arbitrary<infer T> ? T : never;
const op = fc.record({ team: fc.constantFrom(...teamNames), spec: fc.option(teamSpec, { nil: undefined }) });

const body = (name: string, s: Spec): Team =>
  ({
    apiVersion: 'management.service/v1',
    kind: 'Team',
    metadata: { name },
    spec: { displayName: name, users: s.users, ...(s.owner ? { owner: s.owner } : {}), access: s.access },
  }) as unknown as Team;

/** The walk the index replaces: every team is a candidate. */
const walkEvery = (world: TeamWorld, names: () => string[]): TeamWorld => ({
  get: (n) => world.get(n),
  teamsOf: (u, g) => world.teamsOf(u, g),
  referencing: () => names(),
});

const stops: (() => void)[] = [];
afterEach(() => stops.splice(0).forEach((s) => s()));

describe('team index references', () => {
  it('gives the same grants as walking every team, after random writes and deletes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 12 }), teamSpec, fc.constantFrom(...teamNames), async (ops, replacement, replaced) => {
        const registry = createRegistry(new MemoryStore());
        const index = new TeamIndex(registry.teams, pino({ level: 'silent' }));
        await index.start();
        stops.push(() => index.stop());
        const live = new Set<string>();
        for (const { team, spec } of ops) {
          if (spec) {
            await registry.teams.apply(team, body(team, spec), { fieldManager: 'test', force: true });
            live.add(team);
          } else if (live.delete(team)) {
            await registry.teams.delete(team);
          }
        }
        await index.caughtUp();
        const authz = new Authorizer(index, 'management.service');
        const every = walkEvery(index, () => [...live]);
        const next = body(replaced, replacement);
        const overlay = withTeam(index, replaced, next);
        const everyOverlay = withTeam(every, replaced, next);
        for (const user of [undefined, ...users]) {
          for (const teams of [[], ['t0'], ['t1', 't3'], teamNames]) {
            const p = { ...(user ? { user } : {}), teams };
            expect(grantsOf(p, index, authz)).toEqual(grantsOf(p, every, authz));
            expect(grantsOf(p, overlay, authz)).toEqual(grantsOf(p, everyOverlay, authz));
          }
        }
        index.stop();
      }),
      { numRuns: 60, interruptAfterTimeLimit: 15_000 },
    );
  }, 30_000);
});
