/** A grant the authorizer names, as the steps from an identity to it, and those steps as text. */
import type { Grant } from '../auth/authorize.js';
import { grantsAnything, memberBy, type TeamWorld } from '../auth/grants.js';
import type { Identity } from '../auth/identity.js';
import type { Step } from './model.js';

/** How `who` belongs to `team`: `self` for a team key of it, else by users or by each group. */
export function waysIn(who: Identity, team: string, world: Pick<TeamWorld, 'get'>): string[] {
  if (who.team === team) return ['self'];
  return memberBy(world.get(team), who.user, who.groups);
}

/** Each path by which `who` holds `grant` on object `of` (a Team's name, for owner and access rules). */
export function pathsOf(grant: Grant, who: Identity, of: string, world: Pick<TeamWorld, 'get'>): Step[][] {
  const through = (team: string, last: Step): Step[][] => waysIn(who, team, world).map((by) => [{ step: 'member', team, by }, last]);
  switch (grant.kind) {
    case 'role':
      // Every team of the identity's that grants the role: each is a path an auditor may want cut.
      return who.teams
        .filter((t) => {
          const team = world.get(t);
          return grantsAnything(team) && (team.spec?.clusterRoles ?? []).some((r) => r.name === grant.role);
        })
        .flatMap((t) => through(t, { step: 'role', role: grant.role, team: t }));
    case 'owner':
      return 'user' in grant ? [[{ step: 'owner', of, user: grant.user }]] : through(grant.team, { step: 'owner', of, team: grant.team });
    case 'access': {
      const name = world.get(of)?.spec?.access?.[grant.rule]?.name;
      const rule = { of, rule: grant.rule, ...(name ? { name } : {}) };
      return 'user' in grant ? [[{ step: 'access', ...rule, user: grant.user }]] : through(grant.team, { step: 'access', ...rule, team: grant.team });
    }
    case 'listed':
      return [[{ step: 'listed' }]];
    case 'ownKeys':
      return [[{ step: 'ownKeys', user: grant.user }]];
    case 'teamKeys':
      return pathsOf(grant.because, who, grant.team, world).map((p) => [...p, { step: 'teamKeys', team: grant.team }]);
    case 'requester':
    case 'approver':
    case 'teamAdder':
      // Grants on AccessRequests only: the review walks Teams and keys, which these never reach.
      return [];
  }
}

function stepText(s: Step): string {
  switch (s.step) {
    case 'member':
      return s.by === 'self' ? `is team ${s.team}` : `member of team ${s.team} by ${s.by === 'users' ? 'users' : s.by.replace(/^group:/, 'group ')}`;
    case 'role':
      return `cluster role ${s.role} of team ${s.team}`;
    case 'owner':
      return s.user !== undefined ? `owner of team ${s.of} (user)` : `owner of team ${s.of} (team ${s.team})`;
    case 'access':
      return `access rule ${s.name ?? s.rule} of team ${s.of} (${s.user !== undefined ? 'user' : `team ${s.team}`})`;
    case 'listed':
      return 'open list (shows only what may be read)';
    case 'ownKeys':
      return 'own keys (spec.user)';
    case 'teamKeys':
      return s.team === '*' ? 'keys of every team (may update each)' : `keys of team ${s.team} (may update it)`;
    case 'scope':
      return `key ${s.key} scope: ${s.scope}`;
  }
}

/** The steps as one line: `member of team ops by users > owner of team payments (team ops)`. */
export const pathText = (steps: Step[]): string => steps.map(stepText).join(' > ');
