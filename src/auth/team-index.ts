/**
 * An in-memory view of every Team, kept current by a watch (an informer): who belongs to which
 * team, and each team's roles, owner and access rules, so authorization never scans the store.
 * It fails closed: a reload is built aside and swapped in only when complete; until the first list
 * completes every decision that needs the index is refused with 503, and a decision is made only
 * once the index has seen every write before it (caughtUp). A broken watch does not make the index
 * wrong, only possibly behind: the snapshot stays exact at the revision the watch reached, so
 * while the store has not moved past it (a storage fault stops writes too) requests are still
 * decided, and otherwise they wait for the reload.
 */
import type { Logger } from 'pino';
import { serviceUnavailable } from '../api/errors.js';
import { isApprover } from '../api/access-request.js';
import { authView } from './team-view.js';
import type { Team } from '../api/types.js';
import type { ResourceRegistry } from '../registry/resource-registry.js';
import type { StoreWatch } from '../store/types.js';
import { grantsAnything, principalTokens, referenceTokens, type TeamWorld } from './grants.js';

/** How long a write waits for the index to see the writes before it; then 503. */
const catchUpMs = 5_000;

interface Snapshot {
  teams: Map<string, Team>;
  byUser: Map<string, Set<string>>;
  byGroup: Map<string, Set<string>>;
  /** Owner and access-rule references (grants.ts referenceTokens) to the teams that make them. */
  byReference: Map<string, Set<string>>;
  /** Users named by spec.accessRequests.approvers to the teams that name them. */
  byApprover: Map<string, Set<string>>;
  /** Users named by spec.accessRequests.breakGlass.users to the teams that name them. */
  byBreakGlass: Map<string, Set<string>>;
}

const emptySnapshot = (): Snapshot => ({ teams: new Map(), byUser: new Map(), byGroup: new Map(), byReference: new Map(), byApprover: new Map(), byBreakGlass: new Map() });

/** The approvers a team (its view: team-view.ts gives a list of strings) names. */
const approversOf = (team: Team | undefined): readonly string[] => team?.spec?.accessRequests?.approvers ?? [];

/** The users a team (its view) lets break the glass into its membership. */
const breakGlassUsersOf = (team: Team | undefined): readonly string[] => team?.spec?.accessRequests?.breakGlass?.users ?? [];

/** TeamWorld.breakingGlass over one snapshot: the teams naming the user a break-glass user. */
const breakingGlassIn = (snap: Snapshot, user: string): string[] => [...(snap.byBreakGlass.get(user) ?? [])].sort();

/** TeamWorld.approving over one snapshot: the owner's teams (found by reference) and the named approvers. */
function approvingIn(snap: Snapshot, referencing: Iterable<string>, user: string, teams: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const t of referencing) if (isApprover(snap.teams.get(t), user, teams)) out.add(t);
  for (const t of snap.byApprover.get(user) ?? []) out.add(t);
  return out;
}

/**
 * The index's state, moved by `follow` and `stop` only. In every state but Loading the snapshot is
 * exact at max(seen, verified). Invariants:
 * - Loading: no list has completed yet; every decision that needs the index is refused (503).
 * - Following: the snapshot follows `watch`, a subscription from the revision of its list; caughtUp
 *   also trusts the watch's progress (what it examined, queued events applied within a macrotask).
 * - Reloading: the watch ended; a new list every retryMs until one completes, then Following. The
 *   snapshot is still used; caughtUp passes only targets up to `verified`, else waits (503 after 5 s).
 * - Stopped: the server is closing; caughtUp answers 503 at once instead of waiting. `loaded`: a
 *   list had completed, so decisions the snapshot already allows are still made.
 */
type IndexState =
  | { name: 'Loading' }
  | { name: 'Following'; watch: StoreWatch<Team> }
  | { name: 'Reloading' }
  | { name: 'Stopped'; loaded: boolean };

export class TeamIndex implements TeamWorld {
  private snap: Snapshot = emptySnapshot();
  private state: IndexState = { name: 'Loading' };
  /** The revision of the last team change the snapshot holds (or of the list it was loaded at). */
  private seen = 0;
  /**
   * A revision up to which the snapshot is known to hold every team change, past `seen` when later
   * writes were to other kinds (so a request after a key write does not wait for the watch again).
   */
  private verified = 0;

  constructor(
    /** The teams' registry: the index reads its pages and changes, never the store by key. */
    private readonly teams: ResourceRegistry,
    private readonly log: Logger,
    private readonly retryMs = 200,
  ) {}

  /** Loads every team and starts following changes; resolves once loaded. */
  async start(): Promise<void> {
    const revision = await this.load();
    void this.follow(revision);
  }

  stop(): void {
    const was = this.state;
    this.state = { name: 'Stopped', loaded: was.name !== 'Loading' && (was.name !== 'Stopped' || was.loaded) };
    if (was.name === 'Following') was.watch.stop();
  }

  /** Throws 503 (with Retry-After) while the index is not complete. */
  require(): void {
    const s = this.state;
    if (s.name === 'Loading' || (s.name === 'Stopped' && !s.loaded)) throw serviceUnavailable('the team index is still loading; authorization is not possible until it is complete', 1);
  }

  /**
   * Waits until the index has seen every write made before this call, so that a write is judged on
   * the teams as they are, not as a lagging watch last saw them. `atLeast`: a store revision the
   * caller read after its request arrived (a consistent read's), used instead of reading another.
   */
  async caughtUp(atLeast?: number): Promise<void> {
    this.require();
    const target = atLeast ?? (await this.teams.currentRevision());
    const deadline = Date.now() + catchUpMs;
    for (;;) {
      if (Math.max(this.seen, this.verified) >= target) return;
      // Writes to other kinds move the store's revision without a team event: the watch's progress
      // says it examined them. Progress counts what the watch queued, not what follow() applied;
      // follow() applies queued events in microtasks, so after one macrotask they are all in the
      // snapshot, unless the watch broke meanwhile (then it is not counted).
      const state = this.state;
      const progress = state.name === 'Following' ? state.watch.progress() : 0;
      if (state.name === 'Following' && progress >= target) {
        await new Promise((r) => setImmediate(r));
        if (this.state !== state) continue;
        this.verified = Math.max(this.verified, progress);
        return;
      }
      // Stopped (the server shutting down): the watch will not catch up; answer now, not at the deadline.
      if (state.name === 'Stopped') throw serviceUnavailable('the server is shutting down; try again', 1);
      if (Date.now() > deadline) throw serviceUnavailable('the team index is behind the store; try again', 1);
      await new Promise((r) => setTimeout(r, 2));
    }
  }

  /**
   * A number that changes whenever any team does: the revision the snapshot is at (every team
   * event and every reload moves it, and the same revision means the same teams).
   */
  get generation(): number {
    return this.seen;
  }

  get(name: string): Team | undefined {
    return this.snap.teams.get(name);
  }

  referencing(user: string | undefined, teams: readonly string[]): Iterable<string> {
    const out = new Set<string>();
    for (const token of principalTokens(user, teams)) for (const t of this.snap.byReference.get(token) ?? []) out.add(t);
    return out;
  }

  approving(user: string, teams: readonly string[]): Iterable<string> {
    return approvingIn(this.snap, this.referencing(user, teams), user, teams);
  }

  breakingGlass(user: string): Iterable<string> {
    return breakingGlassIn(this.snap, user);
  }

  /** Teams with the user in spec.users or one of the groups in spec.groups. */
  teamsOf(user: string | undefined, groups: string[]): string[] {
    const out = new Set<string>();
    if (user) for (const t of this.snap.byUser.get(user) ?? []) out.add(t);
    for (const g of groups) for (const t of this.snap.byGroup.get(g) ?? []) out.add(t);
    return [...out].sort();
  }

  /** Lists every team into a new snapshot; the current one is replaced only when the list completes. */
  private async load(): Promise<number> {
    const next = emptySnapshot();
    let after = '';
    let revision: number | undefined;
    for (;;) {
      // Every page at the first page's revision: one consistent picture, not a mix of moments.
      const page = await this.teams.informerPage({ limit: 1000, after, ...(revision !== undefined ? { revision } : {}) });
      revision = page.revision;
      for (const t of page.items) put(next, t as Team);
      if (!page.continueAfter) break;
      after = page.continueAfter;
    }
    this.snap = next;
    this.seen = revision;
    // The new snapshot vouches for its own revision only (a list is never older than what was
    // verified before it, as it reads the store's revision after; this does not rely on that).
    this.verified = revision;
    return revision;
  }

  private async follow(from: number): Promise<void> {
    let revision = from;
    while (!this.stopped()) {
      const watch = this.teams.informerWatch(revision) as StoreWatch<Team>;
      this.state = { name: 'Following', watch };
      // Whether the iteration ended by itself (it then gave every event up to its progress) rather
      // than by an event this loop could not apply (for-await then discards what was queued).
      let drained = true;
      try {
        for await (const e of watch) {
          drained = false;
          if (e.type === 'DELETED') remove(this.snap, e.object.metadata.name!);
          else put(this.snap, e.object);
          drained = true;
          revision = e.revision;
          this.seen = revision;
        }
        if (this.stopped()) return;
        throw new Error('the watch ended');
      } catch (err) {
        if (this.stopped()) return;
        // History gone or watch cut off. The iteration ended only after every event up to the
        // watch's progress (StoreWatch.progress), so the snapshot is exact there; it follows nothing
        // more, so from here only that revision vouches for it (caughtUp) until the reload.
        this.state = { name: 'Reloading' };
        if (drained) this.verified = Math.max(this.verified, watch.progress());
        this.log.warn({ err }, 'team index watch ended; reloading');
        revision = await this.reload();
      }
    }
  }

  /** A method, not `this.state.name === 'Stopped'` inline: TypeScript would keep a narrowing across awaits. */
  private stopped(): boolean {
    return this.state.name === 'Stopped';
  }

  /** Lists again until a list completes (or the index is stopped). */
  private async reload(): Promise<number> {
    for (;;) {
      await new Promise((r) => setTimeout(r, this.retryMs));
      if (this.stopped()) return this.seen;
      try {
        return await this.load();
      } catch (err) {
        this.log.warn({ err }, 'team index could not list teams; requests that need it get 503 until it can');
      }
    }
  }
}

/**
 * A fixed world of teams, indexed as the live index indexes them (the same snapshot): what the
 * access review decides against, from teams it read once, with the request path's lookups.
 */
export function teamWorldOf(teams: Iterable<Team>): TeamWorld & Required<Pick<TeamWorld, 'approving'>> & { names(): string[] } {
  const snap = emptySnapshot();
  for (const t of teams) put(snap, t);
  const referencing = (user: string | undefined, principals: readonly string[]) => {
    const out = new Set<string>();
    for (const token of principalTokens(user, principals)) for (const t of snap.byReference.get(token) ?? []) out.add(t);
    return out;
  };
  const teamsOf = (user: string | undefined, groups: string[]) => {
    const out = new Set<string>();
    if (user) for (const t of snap.byUser.get(user) ?? []) out.add(t);
    for (const g of groups) for (const t of snap.byGroup.get(g) ?? []) out.add(t);
    return [...out].sort();
  };
  const approving = (user: string, principals: readonly string[]) => approvingIn(snap, referencing(user, principals), user, principals);
  const breakingGlass = (user: string) => breakingGlassIn(snap, user);
  return { get: (name) => snap.teams.get(name), referencing, teamsOf, approving, breakingGlass, names: () => [...snap.teams.keys()].sort() };
}

function put(snap: Snapshot, full: Team): void {
  const team = authView(full);
  const name = team.metadata.name!;
  remove(snap, name);
  snap.teams.set(name, team);
  // A terminating team grants nothing (grants.ts grantsAnything): it is kept for lookups by name
  // (its keys are refused by it), but no member or reference finds it.
  if (!grantsAnything(team)) return;
  for (const u of team.spec?.users ?? []) add(snap.byUser, u, name);
  for (const g of team.spec?.groups ?? []) add(snap.byGroup, g, name);
  for (const r of referenceTokens(team)) add(snap.byReference, r, name);
  for (const u of approversOf(team)) add(snap.byApprover, u, name);
  for (const u of breakGlassUsersOf(team)) add(snap.byBreakGlass, u, name);
}

function remove(snap: Snapshot, name: string): void {
  const old = snap.teams.get(name);
  if (!old) return;
  snap.teams.delete(name);
  for (const u of old.spec?.users ?? []) drop(snap.byUser, u, name);
  for (const g of old.spec?.groups ?? []) drop(snap.byGroup, g, name);
  for (const r of referenceTokens(old)) drop(snap.byReference, r, name);
  for (const u of approversOf(old)) drop(snap.byApprover, u, name);
  for (const u of breakGlassUsersOf(old)) drop(snap.byBreakGlass, u, name);
}

/** Removes a value, and its key once empty: the index holds only what live teams say. */
function drop(map: Map<string, Set<string>>, key: string, value: string): void {
  const set = map.get(key);
  if (!set) return;
  set.delete(value);
  if (set.size === 0) map.delete(key);
}

function add(map: Map<string, Set<string>>, key: string, value: string): void {
  let set = map.get(key);
  if (!set) map.set(key, (set = new Set()));
  set.add(value);
}
