/**
 * What a write, a new key or an impersonation would confer, atom by atom, and the 403 message that
 * names what the writer lacks (grants.ts grantsOf and holds, escalation.ts): decided directly on a
 * fixed world of teams, as the request path decides them. Each case pins a part of the message the
 * mutation set reached without holding (docs/mutation-testing.md, src/auth survivors).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { OwnedAccessKey, OwnedAccessKeySpec, Team } from '../../src/api/types.js';
import { Authorizer } from '../../src/auth/authorize.js';
import { impersonationEscalation, keyEscalation, teamEscalation } from '../../src/auth/escalation.js';
import { withTeam } from '../../src/auth/grants.js';
import { identityFor } from '../../src/auth/identity.js';
import { teamWorldOf } from '../../src/auth/team-index.js';

const group = 'management.service';
const team = (name: string, spec?: Team['spec']): Team => ({ apiVersion: `${group}/v1`, kind: 'Team', metadata: { name }, ...(spec ? { spec } : {}) }) as Team;
const key = (spec: OwnedAccessKeySpec): OwnedAccessKey => ({ apiVersion: `${group}/v1`, kind: 'OwnedAccessKey', metadata: { name: 'k' }, spec }) as OwnedAccessKey;

const teams = (): Team[] => [
  team('keyadmins', { users: ['kai'], clusterRoles: [{ name: 'accesskeys-admin' }] }),
  // Roles listed out of order; kai may read this team, not `hidden`.
  team('a', { users: ['ana'], clusterRoles: [{ name: 'teams-creator' }, { name: 'teams-admin' }], access: [{ name: 'kai-reads', verbs: ['get'], users: ['kai'] }] }),
  team('hidden', { users: ['hal'], clusterRoles: [{ name: 'teams-admin' }] }),
  team('payments', { owner: { user: 'olga' }, access: [{ name: 'ivy-reads', verbs: ['get'], users: ['ivy'] }] }),
  team('imps', { users: ['ivy'], clusterRoles: [{ name: 'impersonator' }] }),
  team('x', { users: ['bo'] }),
];
// Built in a hook, not at import: code run while the file is collected makes its mutants "static"
// for Stryker, each then run against every test of the set (docs/mutation-testing.md).
let world: ReturnType<typeof teamWorldOf>;
let authz: Authorizer;
beforeAll(() => {
  world = teamWorldOf(teams());
  authz = new Authorizer(world, group);
});
const who = (spec: OwnedAccessKeySpec) => identityFor(spec, world, 'writer');
const now = new Date('2026-01-01T00:00:00Z');
const newKey = (writer: OwnedAccessKeySpec, spec: OwnedAccessKeySpec) => keyEscalation(who(writer), authz, world, undefined, key(spec), { setsKey: true, now });

describe('a new key holds what its subject holds, and the writer must hold it too', () => {
  it("names the roles a member's teams grant, sorted, when the writer may read those teams", () => {
    expect(newKey({ user: 'kai' }, { user: 'ana' })).toBe('the key would hold cluster role "teams-admin"; cluster role "teams-creator", which you do not hold');
  });

  it('does not name a role that comes from a team the writer may not read', () => {
    expect(newKey({ user: 'kai' }, { user: 'hal' })).toBe('the key would hold rights on teams you may not read, which you do not hold');
  });

  it("counts what a team's owner holds on it: a key for her needs every verb there", () => {
    expect(newKey({ user: 'kai' }, { user: 'olga' })).toBe('the key would hold rights on teams you may not read, which you do not hold');
  });

  it("lets a team's owner make her own key: she holds the team's keys through update on it", () => {
    expect(newKey({ user: 'olga' }, { user: 'olga' })).toBeUndefined();
  });

  it("refuses a scoped key removing its own scope (a widening), whatever else stays the same", () => {
    const scope = { rules: [{ verbs: ['get', 'update', 'patch'], resources: [{ group, resources: ['ownedaccesskeys'] }] }] };
    const writer = identityFor({ user: 'ana', scope }, world, 'k');
    expect(keyEscalation(writer, authz, world, key({ user: 'ana', scope }), key({ user: 'ana' }), { setsKey: false, now })).toBe("a key made or widened by a scoped key needs a scope within that key's scope");
  });
});

describe('impersonating someone gives whatever they hold', () => {
  it("names the owner's verbs on her team, the team's keys and her own keys", () => {
    const missing = impersonationEscalation(who({ user: 'ivy' }), authz, world, 'olga', []);
    expect(missing).toBe(
      'impersonating "olga" would give you "list", "watch", "create", "update", "patch", "delete", "deletecollection" on team "payments"; the access keys of team "payments"; the access keys of user "olga", which you do not hold',
    );
  });
});

describe('granting a cluster role to a team', () => {
  it('is refused as such when the writer holds the role but its scope does not allow it', () => {
    const scope = { rules: [{ verbs: ['update', 'patch'], resources: [{ group, resources: ['teams'] }] }] };
    const writer = identityFor({ user: 'ana', scope }, world, 'k');
    const next = team('x', { users: ['bo'], clusterRoles: [{ name: 'teams-creator' }] });
    expect(teamEscalation(writer, authz, world, world.get('x'), next)).toBe('granting cluster role(s) "teams-creator" requires holding them');
  });
});

describe('identity of a key', () => {
  it('has only the groups the key names (none here), as whoami shows them', () => {
    expect(who({ user: 'ana' })).toMatchObject({ name: 'ana', groups: [], teams: ['a'] });
  });

  it('in a world with one Team replaced (a write or a plan judged) belongs to it only if it lists the user or a group', () => {
    const planned = withTeam(world, 'x', team('x', { users: ['bo'], groups: ['devs'], clusterRoles: [{ name: 'teams-viewer' }] }));
    expect(identityFor({ user: 'stranger', groups: ['others'] }, planned, 'k')).toMatchObject({ teams: [], clusterRoles: new Set() });
    expect(identityFor({ user: 'stranger', groups: ['devs'] }, planned, 'k')).toMatchObject({ teams: ['x'], clusterRoles: new Set(['teams-viewer']) });
  });

  it('of a Team with no spec (a manifest a GitOps plan overlays as written) grants no role', () => {
    const planned = withTeam(world, 'bare', team('bare'));
    const id = identityFor({ team: 'bare' }, planned, 'k');
    expect(id.teams).toEqual(['bare']);
    expect([...id.clusterRoles]).toEqual([]);
  });
});
