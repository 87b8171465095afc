/**
 * Which identities a plan can change the rights of, found from the Teams and keys it writes and
 * nothing else: a changed Team's members, the users, groups and teams its owner and access rules
 * name (before and after), the members of those teams, their team keys, and the Login and other
 * keys of those users and groups whose own groups or scope set them apart. Rights reach no
 * further: a team's members are users and groups (teams do not nest), and a right on a Team
 * reaches only that Team and its keys. So the work is linear in what the plan touches.
 */
import { isLoginKey } from '../../api/key-types.js';
import type { OwnedAccessKey, Team } from '../../api/types.js';
import { hasScope } from '../../auth/grants.js';

/** Who the plan may have moved: users, groups, and keys judged as identities of their own. */
export interface Touched {
  users: Set<string>;
  groups: Set<string>;
  /** Keys whose identity is not plainly their user's: team keys, Login keys with groups, keys with groups or a scope. */
  keys: Set<string>;
}

/** A key that is its own identity: one of a team, or one whose groups or scope make it differ from its user. */
export function isOwnIdentity(key: OwnedAccessKey | undefined): boolean {
  const s = key?.spec;
  return !!s && (!!s.team || hasScope(s) || (s.groups ?? []).length > 0 || (s.identity?.groups ?? []).length > 0 || (!s.user && !s.team));
}

/** Keys by the team, user and groups that make their identity, for the keys of touched identities. */
export class KeyIndex {
  private readonly byTeam = new Map<string, Set<string>>();
  private readonly byUser = new Map<string, Set<string>>();
  private readonly byGroup = new Map<string, Set<string>>();

  constructor(keys: Iterable<OwnedAccessKey>) {
    for (const k of keys) {
      if (!isOwnIdentity(k)) continue;
      const s = k.spec ?? {};
      const name = k.metadata.name!;
      if (s.team) add(this.byTeam, s.team, name);
      if (s.user) add(this.byUser, s.user, name);
      for (const g of [...(s.groups ?? []), ...(s.identity?.groups ?? [])]) add(this.byGroup, g, name);
    }
  }

  ofTeam = (t: string) => this.byTeam.get(t) ?? none;
  ofUser = (u: string) => this.byUser.get(u) ?? none;
  ofGroup = (g: string) => this.byGroup.get(g) ?? none;
}

const none: ReadonlySet<string> = new Set();

function add(map: Map<string, Set<string>>, key: string, value: string): void {
  let set = map.get(key);
  if (!set) map.set(key, (set = new Set()));
  set.add(value);
}

/**
 * The identities whose rights may differ between the two worlds, given the Teams (both versions of
 * each) and keys the plan writes. `teamIn(world, name)` reads a team in the live (0) or planned (1) world.
 */
export function touchedIdentities(
  changedTeams: Iterable<string>,
  changedKeys: Iterable<{ before?: OwnedAccessKey | undefined; after?: OwnedAccessKey | undefined }>,
  teamIn: (world: 0 | 1, name: string) => Team | undefined,
  keys: KeyIndex,
): Touched {
  const out: Touched = { users: new Set(), groups: new Set(), keys: new Set() };
  const expand = new Set<string>();
  for (const name of changedTeams) {
    expand.add(name);
    for (const w of [0, 1] as const) {
      const spec = teamIn(w, name)?.spec;
      if (!spec) continue;
      if (spec.owner?.user) out.users.add(spec.owner.user);
      if (spec.owner?.team) expand.add(spec.owner.team);
      for (const r of spec.access ?? []) {
        for (const u of r.users ?? []) out.users.add(u);
        for (const t of r.teams ?? []) expand.add(t);
      }
    }
  }
  // Members of a changed team, and of a team a changed team's owner or rules name: their rights moved.
  for (const name of expand) {
    for (const w of [0, 1] as const) {
      const spec = teamIn(w, name)?.spec;
      for (const u of spec?.users ?? []) out.users.add(u);
      for (const g of spec?.groups ?? []) out.groups.add(g);
    }
    for (const k of keys.ofTeam(name)) out.keys.add(k);
  }
  for (const u of out.users) for (const k of keys.ofUser(u)) out.keys.add(k);
  for (const g of out.groups) for (const k of keys.ofGroup(g)) out.keys.add(k);
  // A key the plan writes is judged as itself when it is, on either side, more than its user.
  for (const { before, after } of changedKeys) {
    const k = before ?? after!;
    if (isLoginKey(k)) continue;
    if (isOwnIdentity(before) || isOwnIdentity(after)) out.keys.add(k.metadata.name!);
  }
  return out;
}
