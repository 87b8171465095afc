/**
 * The access review's document: who may do what on which objects, through which path, with each
 * identity's keys. Its JSON form is this shape exactly (docs/keys.md, "Access reviews", documents it);
 * `version` changes only when a field changes meaning or goes.
 */
import type { Verb } from '../auth/roles.js';

export const reviewKind = 'AccessReview';
export const reviewVersion = 1;

/** One step of a path, from the identity to the grant. */
export type Step =
  /** The identity belongs to a team: by `users`, by `group:<name>`, or (`self`) it is the team (a team key). */
  | { step: 'member'; team: string; by: string }
  /** A cluster role the team's spec.clusterRoles grants its members. */
  | { step: 'role'; role: string; team: string }
  /** The Team's spec.owner: this user, or the team the identity belongs to. */
  | { step: 'owner'; of: string; user?: string; team?: string }
  /** One of the Team's spec.access rules (by index, and its name when it has one), naming the user or a team it belongs to. */
  | { step: 'access'; of: string; rule: number; name?: string; user?: string; team?: string }
  /** Lists and watches are open to all; they show only the objects the caller may get. */
  | { step: 'listed' }
  /** Every user may manage the keys whose spec.user is themselves. */
  | { step: 'ownKeys'; user: string }
  /** A team's keys are managed by whoever may update the team (the steps before say how). */
  | { step: 'teamKeys'; team: string }
  /** The key the rights are used through, narrowing them by its scope. */
  | { step: 'scope'; key: string; scope: string };

/** Verbs on one object through one path. */
export interface GrantEntry {
  /**
   * `teams/*` (every Team), `teams/NAME`, `ownedaccesskeys/*` (every key),
   * `ownedaccesskeys[user=U]` (keys whose spec.user is U), `ownedaccesskeys[team=T]` (keys of team T),
   * `ownedaccesskeys[team=*]` (the keys of every team).
   */
  object: string;
  verbs: Verb[];
  /** The steps joined for reading; with identity, verb and object, what --since compares. */
  path: string;
  via: Step[];
}

export interface KeyEntry {
  name: string;
  type: string | null;
  createdAt: string | null;
  /** When the current value was set (a rotation), else null: the value is as old as the key. */
  valueSetAt: string | null;
  lastUsedAt: string | null;
  expiresAt: string | null;
  /** `active`, or why the key authenticates as nobody: `disabled`, `expired`, `refused`. */
  state: 'active' | 'disabled' | 'expired' | 'refused';
  /** The server's words for a key that does not authenticate. */
  refusal: string | null;
  scope: string | null;
  /** spec.groups and spec.identity.groups: they may add teams to the identity's. */
  groups: string[];
  /**
   * `identity`: the key may do exactly what its identity may (its rows are the identity's);
   * `none`: nothing (see state, or a scope that allows no management request);
   * `own`: its scope narrows or its groups widen them: its rows are under identity `key:NAME`.
   */
  rights: 'identity' | 'none' | 'own';
}

export interface IdentityEntry {
  /** `user:NAME`, `group:NAME`, `team:NAME`, `subject:NAME` or `key:NAME`. */
  id: string;
  kind: 'user' | 'group' | 'team' | 'subject' | 'key';
  name: string;
  /** Teams it belongs to and how (`users`, `group:G`, `self`). */
  memberOf: { team: string; by: string[] }[];
  roles: string[];
  grants: GrantEntry[];
  /** Its keys (users, teams, subjects); for a `key:` identity, the key itself. */
  keys: KeyEntry[];
}

export interface ReviewDocument {
  kind: typeof reviewKind;
  version: typeof reviewVersion;
  generatedAt: string;
  /** Where the objects were read: a server URL or an embedded store URL. */
  source: string;
  group: string;
  counts: { teams: number; keys: number; identities: number; grants: number };
  identities: IdentityEntry[];
}

/** One (identity, verb, object, path) row: what --since compares and CSV lists. */
export interface Row {
  identity: string;
  verb: Verb;
  object: string;
  path: string;
}
