/**
 * Tables of the pure rules of src/auth that no test of the mutation set reached: when a scope
 * narrows at all (hasScope), a scope rule's namespaces, API group and resource list, temporary
 * membership granted by an AccessRequest for a subset of a team's roles, and a Login key's
 * refusals.
 */
import { describe, expect, it } from 'vitest';
import { requestTeamUidAnnotation } from '../../src/api/access-request.js';
import type { AccessRequest, Team } from '../../src/api/types.js';
import { hasScope } from '../../src/auth/grants.js';
import type { Identity } from '../../src/auth/identity.js';
import { loginKeyRefusal, refreshErrorAnnotation } from '../../src/auth/login-keys.js';
import { scopeDenial, type Scope } from '../../src/auth/scope.js';
import { activeGrants, withTemporaryAccess } from '../../src/auth/temporary-access.js';
import type { OwnedAccessKey } from '../../src/api/types.js';

const denied = "the access key's scope does not allow this management request";

describe('hasScope: whether a key is narrowed at all', () => {
  it.each<[string, Scope | undefined, boolean]>([
    ['no scope', undefined, false],
    ['an empty scope', {}, false],
    ['empty lists', { roles: [], rules: [] }, false],
    ['allowServiceCli false', { allowServiceCli: false }, false],
    ['allowServiceCli unset', { allowServiceCli: undefined }, false],
    ['allowServiceCli true', { allowServiceCli: true }, true],
    ['a role', { roles: [{ role: 'cli' }] }, true],
  ])('%s: %s', (_, scope, narrows) => {
    expect(hasScope(scope === undefined ? {} : { scope })).toBe(narrows);
  });
});

describe("a scope rule's namespaces, group and resources", () => {
  const get = { verb: 'get' as const, group: 'management.service', resource: 'teams' as const, name: 'payments' };
  const rule = (extra: Record<string, unknown>): Scope => ({ rules: [{ verbs: ['get'], ...extra }] });
  it.each<[string, Scope, string | undefined]>([
    ['namespaces naming only a namespace: not this cluster-scoped API', rule({ namespaces: ['team-a'] }), denied],
    ['namespaces including "" (not namespaced)', rule({ namespaces: ['team-a', ''] }), undefined],
    ['group "*"', rule({ resources: [{ group: '*', resources: ['teams'] }] }), undefined],
    ['another group', rule({ resources: [{ group: 'apps', resources: ['teams'] }] }), denied],
    ['this group, no resource list: every resource', rule({ resources: [{ group: 'management.service' }] }), undefined],
    ['this group, another resource', rule({ resources: [{ group: 'management.service', resources: ['ownedaccesskeys'] }] }), denied],
  ])('%s', (_, scope, why) => {
    expect(scopeDenial(scope, get)).toBe(why);
  });
});

describe('temporary membership from AccessRequests', () => {
  const now = new Date('2026-11-27T10:00:00Z');
  const bound = { [requestTeamUidAnnotation]: 'uid-ops' };
  const request = (name: string, spec: Record<string, unknown>, metadata: Record<string, unknown> = { annotations: bound }): AccessRequest =>
    ({ apiVersion: 'management.service/v1', kind: 'AccessRequest', metadata: { name, ...metadata }, spec: { user: 'ana', team: 'ops', reason: 'on call', ...spec }, status: { phase: 'Active', expiresAt: '2026-11-27T11:00:00Z' } }) as unknown as AccessRequest;
  const ops = { apiVersion: 'management.service/v1', kind: 'Team', metadata: { name: 'ops', uid: 'uid-ops', creationTimestamp: '2026-11-27T08:00:00Z' }, spec: { clusterRoles: [{ name: 'teams-viewer' }, { name: 'teams-admin' }] } } as Team;
  const world = { get: (name: string) => (name === 'ops' ? ops : undefined) };
  const ana: Identity = { name: 'ana', user: 'ana', groups: [], teams: [], clusterRoles: new Set(), keyName: 'ana-key' };
  const end = Date.parse('2026-11-27T11:00:00Z');

  it('an identity without a user has no grants', () => {
    expect(activeGrants([request('r1', {})], undefined, now)).toEqual([]);
  });

  it('a request for some roles grants those roles only, and not the membership', () => {
    const grants = activeGrants([request('r1', { roles: ['teams-viewer'] })], 'ana', now);
    expect(grants).toEqual([{ request: 'r1', team: 'ops', roles: ['teams-viewer'], expiresAt: end, binding: { teamUid: 'uid-ops' } }]);
    const as = withTemporaryAccess(ana, grants, world);
    expect({ teams: as.teams, roles: [...as.clusterRoles] }).toEqual({ teams: [], roles: ['teams-viewer'] });
  });

  it('a request without roles grants the membership and every role of the team', () => {
    const grants = activeGrants([request('r2', {})], 'ana', now);
    expect(grants).toEqual([{ request: 'r2', team: 'ops', expiresAt: end, binding: { teamUid: 'uid-ops' } }]);
    const as = withTemporaryAccess(ana, grants, world);
    expect({ teams: as.teams, roles: [...as.clusterRoles].sort() }).toEqual({ teams: ['ops'], roles: ['teams-admin', 'teams-viewer'] });
  });

  it.each<[string, Record<string, unknown>, boolean]>([
    ['bound to the team', { annotations: bound }, true],
    ['bound to an earlier team of the name', { annotations: { [requestTeamUidAnnotation]: 'uid-ops-before' } }, false],
    ['unbound, made after the team', { creationTimestamp: '2026-11-27T09:00:00Z' }, true],
    ['unbound, made the second the team was', { creationTimestamp: '2026-11-27T08:00:00Z' }, true],
    ['unbound, made before the team', { creationTimestamp: '2026-11-27T07:59:59Z' }, false],
    ['unbound, no creation time', {}, false],
  ])('a request %s: granted %s', (_, metadata, granted) => {
    const as = withTemporaryAccess(ana, activeGrants([request('r3', {}, metadata)], 'ana', now), world);
    expect(as.teams).toEqual(granted ? ['ops'] : []);
    expect(as.temporary?.length ?? 0).toBe(granted ? 1 : 0);
  });
});

describe("a Login key's refusals", () => {
  const login = (spec: Record<string, unknown>, annotations?: Record<string, string>): OwnedAccessKey =>
    ({ apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', metadata: { name: 'login-ana', ...(annotations ? { annotations } : {}) }, spec: { user: 'ana', type: 'Login', ...spec } }) as unknown as OwnedAccessKey;
  const now = new Date('2026-11-27T10:00:00Z');

  it('one without an identity refresh time is refused, saying to sign in again', () => {
    expect(loginKeyRefusal(login({}), now)).toBe('this sign-in has no identity refresh time: run teamkeys login');
  });

  it('one not refreshed for too long is refused, with the refresh error when there is one', () => {
    const stale = { identityRefresh: '2026-11-25T10:00:00Z' };
    expect(loginKeyRefusal(login(stale), now)).toBe('the identity of this sign-in has not been refreshed since 2026-11-25T10:00:00Z, longer than the server allows: run teamkeys login');
    expect(loginKeyRefusal(login(stale, { [refreshErrorAnnotation]: 'provider unreachable' }), now)).toBe(
      'the identity of this sign-in has not been refreshed since 2026-11-25T10:00:00Z (provider unreachable), longer than the server allows: run teamkeys login',
    );
  });
});
