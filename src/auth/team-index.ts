/**
 * An in-memory view of every Team, kept current by a watch (an informer): who belongs to which
 * team, and each team's roles, owner and access rules, so authorization never scans the store.
 */
import type { Logger } from 'pino';
import type { Team } from '../api/types.js';
import type { Store, StoreWatch } from '../store/types.js';

const prefix = '/teams/';

export class TeamIndex {
  private teams = new Map<string, Team>();
  private byUser = new Map<string, Set<string>>();
  private byGroup = new Map<string, Set<string>>();
  private watch: StoreWatch<Team> | undefined;
  private stopped = false;

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
  ) {}

  /** Loads every team and starts following changes; resolves once loaded. */
  async start(): Promise<void> {
    const revision = await this.load();
    void this.follow(revision);
  }

  stop(): void {
    this.stopped = true;
    this.watch?.stop();
  }

  get(name: string): Team | undefined {
    return this.teams.get(name);
  }

  /** Teams with the user in spec.users or one of the groups in spec.groups. */
  teamsOf(user: string | undefined, groups: string[]): string[] {
    const out = new Set<string>();
    if (user) for (const t of this.byUser.get(user) ?? []) out.add(t);
    for (const g of groups) for (const t of this.byGroup.get(g) ?? []) out.add(t);
    return [...out].sort();
  }

  private async load(): Promise<number> {
    this.teams = new Map();
    this.byUser = new Map();
    this.byGroup = new Map();
    let after = '';
    for (;;) {
      const page = await this.store.list<Team>(prefix, { limit: 1000, after });
      for (const t of page.items) this.put(t);
      if (!page.continueAfter) return page.revision;
      after = page.continueAfter;
    }
  }

  private async follow(from: number): Promise<void> {
    let revision = from;
    while (!this.stopped) {
      try {
        this.watch = this.store.watch<Team>(prefix, revision);
        for await (const e of this.watch) {
          if (e.type === 'DELETED') this.remove(e.object.metadata.name!);
          else this.put(e.object);
          revision = e.revision;
        }
      } catch (err) {
        if (this.stopped) return;
        // History gone or watch cut off: start over from a fresh list.
        this.log.warn({ err }, 'team index watch ended; reloading');
        await new Promise((r) => setTimeout(r, 200));
        revision = await this.load().catch(() => revision);
      }
    }
  }

  private put(team: Team): void {
    const name = team.metadata.name!;
    this.remove(name);
    this.teams.set(name, team);
    for (const u of team.spec?.users ?? []) add(this.byUser, u, name);
    for (const g of team.spec?.groups ?? []) add(this.byGroup, g, name);
  }

  private remove(name: string): void {
    const old = this.teams.get(name);
    if (!old) return;
    this.teams.delete(name);
    for (const u of old.spec?.users ?? []) this.byUser.get(u)?.delete(name);
    for (const g of old.spec?.groups ?? []) this.byGroup.get(g)?.delete(name);
  }
}

function add(map: Map<string, Set<string>>, key: string, value: string): void {
  let set = map.get(key);
  if (!set) map.set(key, (set = new Set()));
  set.add(value);
}
