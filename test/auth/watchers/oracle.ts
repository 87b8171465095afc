/**
 * The watchers' oracle: whether a key could read an object at one revision, from the whole state
 * at that revision (every team and key, read by the administrator with resourceVersionMatch=Exact)
 * and the authorization rules (the real Authorizer, keyRefusal and scope, over that state rather
 * than the server's team index). Only functions that predate issue 24 are used, so the same oracle
 * judges the code before the fix.
 */
import { keyRefusal } from '../../../src/auth/authenticate.js';
import { Authorizer } from '../../../src/auth/authorize.js';
import { subjectOf, type Identity } from '../../../src/auth/identity.js';
import type { Resource } from '../../../src/auth/roles.js';
import { scopeDenial } from '../../../src/auth/scope.js';
import type { TeamIndex } from '../../../src/auth/team-index.js';
import type { KubeObject, OwnedAccessKey, Team } from '../../../src/api/types.js';
import type { Registry } from '../../../src/registry/registry.js';

export const group = 'management.service';

/** Every team and key at one revision. */
export interface State {
  revision: number;
  teams: Map<string, Team>;
  keys: Map<string, OwnedAccessKey>;
}

/** States by revision, each read once. */
export class History {
  private readonly states = new Map<number, Promise<State>>();
  constructor(private readonly registry: Registry) {}

  at(revision: number): Promise<State> {
    let s = this.states.get(revision);
    if (!s) this.states.set(revision, (s = this.read(revision)));
    return s;
  }

  private async read(revision: number): Promise<State> {
    const exact = { resourceVersion: String(revision), resourceVersionMatch: 'Exact' };
    const byName = <T extends KubeObject>(items: KubeObject[]) => new Map(items.map((o) => [o.metadata.name!, o as T]));
    const [teams, keys] = await Promise.all([this.registry.teams.list(exact), this.registry.ownedaccesskeys.list(exact)]);
    return { revision, teams: byName<Team>(teams.items), keys: byName<OwnedAccessKey>(keys.items) };
  }
}

/** The team index as it would be at this state (what Authorizer and keyRefusal read of it). */
function indexOf(s: State): TeamIndex {
  // Every team as a candidate for `referencing`: the model walks them all, the server indexes them.
  return { get: (name: string) => s.teams.get(name), referencing: () => [...s.teams.keys()] } as unknown as TeamIndex;
}

/** Who the key acts for at this state, as authenticate.ts derives it. */
function identityAt(key: OwnedAccessKey, s: State): Identity {
  const spec = key.spec;
  const subject = subjectOf(spec);
  const groups = [...new Set([...(spec.groups ?? []), ...(spec.identity?.groups ?? [])])];
  const teams = subject.team
    ? [subject.team]
    : [...s.teams.values()]
        .filter((t) => (subject.user !== undefined && (t.spec?.users ?? []).includes(subject.user)) || (t.spec?.groups ?? []).some((g) => groups.includes(g)))
        .map((t) => t.metadata.name!);
  const clusterRoles = new Set<string>();
  // A terminating team grants nothing (issue 24); these worlds make none, so old code agrees.
  for (const t of teams) if (!s.teams.get(t)?.metadata.deletionTimestamp) for (const r of s.teams.get(t)?.spec?.clusterRoles ?? []) clusterRoles.add(r.name);
  return { ...subject, groups, teams, clusterRoles, keyName: key.metadata.name!, ...(spec.scope ? { scope: spec.scope } : {}) };
}

/**
 * The identity of the key (by name and uid) if it authenticates at this state and its scope allows
 * watching `resource`; undefined otherwise. `now` decides expiry.
 */
export function watcherAt(keyName: string, keyUid: string, resource: Resource, s: State, now: Date): Identity | undefined {
  const key = s.keys.get(keyName);
  if (!key || key.metadata.uid !== keyUid) return undefined;
  if (keyRefusal(key, now, undefined, indexOf(s))) return undefined;
  const who = identityAt(key, s);
  if (scopeDenial(who.scope, { verb: 'watch', group, resource })) return undefined;
  return who;
}

/** Whether `who` may get `obj` at this state. */
export function readable(who: Identity, resource: Resource, obj: KubeObject, s: State): boolean {
  return new Authorizer(indexOf(s), group).visible(who, resource)(obj);
}
