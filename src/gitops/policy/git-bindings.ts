/**
 * `git` as policies see it: every desired object, and lookups that let a rule about one object
 * ask about the others in constant cost (a rule scanning git.teams for each key costs keys x teams
 * x users, which a pull request's size decides).
 */
import { celList, celMap, type CelInput, type CelValue } from '@bufbuild/cel';
import type { DesiredObject } from '../validate.js';

/**
 * JSON as CEL sees it: whole numbers are `int` (as kube types integer fields), so `ttl / 86400`
 * works. Objects become CEL maps once here: a plain object would be copied into a new map at every
 * field access.
 */
export function toCel(value: unknown): CelValue {
  if (typeof value === 'number') return Number.isInteger(value) ? BigInt(value) : value;
  if (Array.isArray(value)) return celList(value.map(toCel));
  if (value !== null && typeof value === 'object') return celMap(new Map(Object.entries(value).map(([k, v]) => [k, toCel(v)])));
  return value as CelValue;
}

/**
 * git.teams and git.ownedaccesskeys (lists of objects), git.teamsByName and
 * git.ownedaccesskeysByName (maps from name to object), git.teamsByUser (a map from each user
 * listed in a Team's spec.users to the names of those teams).
 */
export function gitBindings(desired: DesiredObject[]): CelInput {
  const teams = desired.filter((d) => d.plural === 'teams').map((d) => d.obj);
  const keys = desired.filter((d) => d.plural === 'ownedaccesskeys').map((d) => d.obj);
  const byUser = new Map<string, string[]>();
  for (const t of teams) {
    const users = (t.spec as { users?: unknown } | undefined)?.users;
    if (Array.isArray(users)) for (const u of users) if (typeof u === 'string') byUser.get(u)?.push(t.metadata.name!) ?? byUser.set(u, [t.metadata.name!]);
  }
  const named = (objects: typeof teams) => objects.map((o) => [o.metadata.name!, toCel(o)] as const);
  const [namedTeams, namedKeys] = [named(teams), named(keys)];
  return celMap(
    new Map<string, CelValue>([
      ['teams', celList(namedTeams.map(([, o]) => o))],
      ['ownedaccesskeys', celList(namedKeys.map(([, o]) => o))],
      ['teamsByName', celMap(new Map(namedTeams))],
      ['ownedaccesskeysByName', celMap(new Map(namedKeys))],
      ['teamsByUser', celMap(new Map([...byUser].map(([u, names]) => [u, celList(names)])))],
    ]),
  );
}
