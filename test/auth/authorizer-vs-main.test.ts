/**
 * Review of the authorizer refactor (issue 27): main's Authorizer (copied verbatim into
 * old-authorize.ts, imports re-pointed) and integ's decide the same on random worlds: verbsOn /
 * allowed for every identity, resource, object and subresource, visible() and readBasis().
 * Worlds are richer than test/auth/model/world.ts: access rules with subresources, unknown verbs,
 * duplicate principals, owners by user and team at once, terminating teams, unknown roles.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Authorizer } from '../../src/auth/authorize.js';
import { identityFor } from '../../src/auth/identity.js';
import { teamWorldOf } from '../../src/auth/team-index.js';
import { verbs as allVerbs } from '../../src/auth/roles.js';
import { Authorizer as OldAuthorizer } from './main-authorizer.js';
import type { KubeObject, OwnedAccessKeySpec, Team } from '../../src/api/types.js';

const users = ['u1', 'u2', 'u3'];
const groups = ['g1', 'g2'];
const teamNames = ['t1', 't2', 't3', 'constructor'];
const roles = ['management-admin', 'teams-admin', 'teams-viewer', 'teams-creator', 'accesskeys-admin', 'cluster-admin', '__proto__'];
const ruleVerbs = [...allVerbs, '*', 'escalate'];
const subs = [undefined, 'status', 'accesskeys', 'rotation', '*', 'constructor'];

const sub = <T>(xs: T[], max = 3) => fc.subarray(xs, { maxLength: max });
const rule = fc.record(
  {
    name: fc.constant('r'),
    verbs: sub(ruleVerbs, 4),
    users: fc.array(fc.constantFrom(...users), { maxLength: 3 }),
    teams: fc.array(fc.constantFrom(...teamNames), { maxLength: 3 }),
    subresources: sub(['status', '*', 'accesskeys', 'rotation'], 2),
  },
  { requiredKeys: ['verbs'] },
);
const team = fc.record({
  name: fc.constantFrom(...teamNames),
  terminating: fc.boolean(),
  spec: fc.record(
    {
      users: sub(users),
      groups: sub(groups, 1),
      clusterRoles: sub(roles, 2).map((r) => r.map((name) => ({ name }))),
      owner: fc.record({ user: fc.constantFrom(...users), team: fc.constantFrom(...teamNames) }, { requiredKeys: [] }),
      access: fc.array(rule, { maxLength: 3 }),
    },
    { requiredKeys: [] },
  ),
});
const keySpec = fc.record(
  {
    user: fc.constantFrom(...users),
    team: fc.constantFrom(...teamNames),
    groups: sub(groups, 2),
  },
  { requiredKeys: [] },
);
const worldArb = fc.record({
  teams: fc.uniqueArray(team, { selector: (t) => t.name, maxLength: 4 }),
  keys: fc.array(keySpec, { minLength: 1, maxLength: 5 }),
});

describe('review: the refactored authorizer decides as main did', () => {
  it('verbsOn, allowed, visible and readBasis agree on random worlds', () => {
    fc.assert(
      fc.property(worldArb, ({ teams, keys }) => {
        const objs: Team[] = teams.map((t, i) => ({
          apiVersion: 'management.service/v1',
          kind: 'Team',
          metadata: { name: t.name, uid: `uid-${i}`, resourceVersion: String(i + 1), ...(t.terminating ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
          spec: t.spec,
        })) as unknown as Team[];
        const world = teamWorldOf(objs);
        const now = new OldAuthorizer(world as never, 'management.service');
        const next = new Authorizer(world, 'management.service');
        const keyObjs: KubeObject[] = keys.map((spec, i) => ({ apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', metadata: { name: `k${i}` }, spec }) as KubeObject);
        // Identities: each key's, one per user, and team keys.
        const specs: OwnedAccessKeySpec[] = [...(keys as OwnedAccessKeySpec[]), ...users.map((user) => ({ user }) as OwnedAccessKeySpec), ...teamNames.map((t) => ({ team: t }) as OwnedAccessKeySpec)];
        for (const [i, spec] of specs.entries()) {
          if (spec.user && spec.team) continue;
          const who = identityFor(spec, world, `who${i}`);
          for (const resource of ['teams', 'ownedaccesskeys'] as const) {
            const targets: (KubeObject | undefined)[] = resource === 'teams' ? [undefined, ...objs] : [undefined, ...keyObjs];
            for (const obj of targets) {
              for (const s of subs) {
                const a = [...now.verbsOn(who, resource, obj, s)].sort();
                const b = [...next.verbsOn(who, resource, obj, s)].sort();
                expect(b, `${who.name} ${resource} ${obj?.metadata.name ?? '(none)'} ${s ?? ''}`).toEqual(a);
              }
            }
            const va = now.visible(who, resource);
            const vb = next.visible(who, resource);
            for (const obj of targets) if (obj) expect(vb(obj), `visible ${who.name} ${obj.metadata.name}`).toBe(va(obj));
            expect(next.readBasis(who, resource)).toBe(now.readBasis(who, resource));
          }
        }
      }),
      { numRuns: 100 },
    );
  });
});
