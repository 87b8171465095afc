/**
 * What manifests say about teams that only git and the server together can check: a team key's
 * team must exist (an error), owners and access rules should name teams that exist (a warning:
 * a team may be created later by hand or by another source), and a plan must not delete a team
 * whose keys stay (the server would collect them with it, through their ownerReference).
 */
import type { KubeObject, TeamSpec } from '../api/types.js';
import type { Plural } from '../client/types.js';
import type { Plan } from './plan/plan.js';
import type { ManifestError } from './source/manifests.js';
import type { DesiredObject } from './validate.js';

function teamNames(desired: DesiredObject[], liveTeams: KubeObject[]): Set<string> {
  return new Set([...desired.filter((d) => d.plural === 'teams').map((d) => d.obj), ...liveTeams].map((o) => o.metadata.name!));
}

const teamOf = (obj: KubeObject): string | undefined => (obj.spec as { team?: string } | undefined)?.team;

/** A team key must refer to a team that exists in git or live. */
export function checkTeamReferences(desired: DesiredObject[], liveTeams: KubeObject[]): ManifestError[] {
  const teams = teamNames(desired, liveTeams);
  const errors: ManifestError[] = [];
  for (const d of desired) {
    const team = teamOf(d.obj);
    if (d.plural === 'ownedaccesskeys' && team && !teams.has(team)) {
      errors.push({ ...d.manifest.locate('spec.team'), message: `spec.team: team "${team}" exists neither in the source nor on the server` });
    }
  }
  return errors;
}

/** Owners and access rules naming a team that exists neither in git nor on the server: it grants nothing (yet). */
export function teamReferenceWarnings(desired: DesiredObject[], liveTeams: KubeObject[]): ManifestError[] {
  const teams = teamNames(desired, liveTeams);
  const warnings: ManifestError[] = [];
  const warn = (d: DesiredObject, field: string, team: string) =>
    warnings.push({ ...d.manifest.locate(field), message: `${field}: team "${team}" exists neither in the source nor on the server, so this grants nothing until it does` });
  for (const d of desired) {
    if (d.plural !== 'teams') continue;
    const spec = (d.obj.spec ?? {}) as TeamSpec;
    if (spec.owner?.team && !teams.has(spec.owner.team)) warn(d, 'spec.owner.team', spec.owner.team);
    (spec.access ?? []).forEach((rule, i) =>
      (rule.teams ?? []).forEach((t, j) => {
        if (!teams.has(t)) warn(d, `spec.access[${i}].teams[${j}]`, t);
      }),
    );
  }
  return warnings;
}

/**
 * The kinds the server binds to their team by an ownerReference (registry.ts bindToTeam), so that
 * deleting the team collects them: keys and FederatedCredentials. Only keys were checked, and a
 * pruned team took another source's (or a hand-made) CI trust rule with it, outside the plan and
 * max-prune (found by a review).
 */
const teamBound: { plural: Plural; kind: string; what: string }[] = [
  { plural: 'ownedaccesskeys', kind: 'OwnedAccessKey', what: 'key' },
  { plural: 'federatedcredentials', kind: 'FederatedCredential', what: 'FederatedCredential' },
];

/**
 * Objects bound to a team the plan deletes while they stay. One in git is an error at its
 * manifest; a live one outside the plan (another source's, or made by hand) refuses the plan.
 */
export function deletedTeamKeys(plan: Pick<Plan, 'actions'>, desired: DesiredObject[], live: Partial<Record<Plural, KubeObject[]>>): { errors: ManifestError[]; refused?: string } {
  const deleted = deletedTeams(plan);
  if (deleted.size === 0) return { errors: [] };
  const errors: ManifestError[] = [];
  for (const { plural, what } of teamBound) {
    for (const d of desired) {
      const team = teamOf(d.obj);
      if (d.plural === plural && team && deleted.has(team)) {
        errors.push({
          ...d.manifest.locate('spec.team'),
          message: `spec.team: team "${team}" is no longer in the source and this plan prunes it, which deletes this ${what} with it: remove the ${what} from the source too, or keep the team`,
        });
      }
    }
  }
  const declared = new Set(desired.map((d) => `${d.plural}/${d.obj.metadata.name}`));
  const refused = keptDependents(plan, live, (plural, name) => declared.has(`${plural}/${name}`));
  return refused ? { errors, refused } : { errors };
}

const deletedTeams = (plan: Pick<Plan, 'actions'>) => new Set(plan.actions.filter((a) => a.plural === 'teams' && a.type === 'delete').map((a) => a.name));

/**
 * Why the plan may not delete its teams: live objects bound to one of them that the plan neither
 * deletes nor declares (what it declares moves off the team, or is an error at its manifest), or
 * undefined. A saved plan's apply asks again with what it declares (its actions that are no delete).
 */
export function keptDependents(plan: Pick<Plan, 'actions'>, live: Partial<Record<Plural, KubeObject[]>>, declared: (plural: Plural, name: string) => boolean): string | undefined {
  const deleted = deletedTeams(plan);
  if (deleted.size === 0) return undefined;
  const kept: string[] = [];
  for (const { plural, kind } of teamBound) {
    const goes = new Set(plan.actions.filter((a) => a.plural === plural && a.type === 'delete').map((a) => a.name));
    for (const o of live[plural] ?? []) {
      const name = o.metadata.name!;
      if (deleted.has(teamOf(o) ?? '') && !goes.has(name) && !declared(plural, name)) kept.push(`${kind}/${name} (team ${teamOf(o)})`);
    }
  }
  return kept.length > 0 ? `pruning a team deletes its keys and FederatedCredentials too, and this plan keeps ${kept.join(', ')}: delete them first, or keep the team in the source` : undefined;
}
