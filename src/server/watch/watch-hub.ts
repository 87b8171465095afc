/** The watches of one server: their places (watch-limits.ts), their keys' checks (watch-keeper.ts), and the open connections shutdown ends. */
import type { AuthContext } from '../auth/guard.js';
import type { EndReason } from './watch-connection.js';
import { WatchKeeper } from './watch-keeper.js';
import { WatchSlots, defaultWatchLimits, type WatchLimits } from './watch-limits.js';

export class WatchHub {
  readonly slots: WatchSlots;
  readonly keeper: WatchKeeper;
  private readonly open = new Set<{ end(reason: EndReason): void }>();

  constructor(
    auth: AuthContext,
    limits: Partial<WatchLimits> = {},
    /** How often watches that allow bookmarks get one (the registry's default when undefined). */
    readonly bookmarkIntervalMs?: number,
  ) {
    this.slots = new WatchSlots({ ...defaultWatchLimits, ...limits });
    this.keeper = new WatchKeeper(auth);
  }

  add(connection: { end(reason: EndReason): void }): void {
    this.open.add(connection);
  }

  delete(connection: { end(reason: EndReason): void }): void {
    this.open.delete(connection);
  }

  /** Ends every open watch, as the server closes: they would otherwise hold it open until their timeouts. */
  endAll(): void {
    for (const connection of [...this.open]) connection.end({ why: 'shutdown' });
  }
}
