/** Background housekeeping: compaction of old history and removal of terminating objects that are due. */
import type { Logger } from 'pino';
import type { ActivityRecorder } from '../auth/activity.js';
import { defaultExpiredKeyRetentionSeconds, removeExpiredKeys } from '../auth/expired-keys.js';
import type { Registry } from '../registry/registry.js';

export interface MaintenanceOptions {
  intervalMs?: number;
  /** Revisions of history kept for watches and paged lists that start in the past. */
  retainRevisions?: number;
  /** Expired keys are deleted this long after they expired. */
  expiredKeyRetentionSeconds?: number;
  now?: () => Date;
}

/** Starts the housekeeping timer; the returned function stops it. */
export function startMaintenance(registry: Registry, activity: ActivityRecorder, log: Logger, opts: MaintenanceOptions = {}): () => void {
  const retain = opts.retainRevisions ?? 10_000;
  let running = false;
  const run = async () => {
    if (running) return;
    running = true;
    try {
      const current = await registry.store.currentRevision();
      if (current - retain > (await registry.store.compactedRevision())) await registry.store.compact(current - retain);
      const now = (opts.now ?? (() => new Date()))();
      const expired = await removeExpiredKeys(registry.ownedaccesskeys, activity, now, opts.expiredKeyRetentionSeconds ?? defaultExpiredKeyRetentionSeconds);
      if (expired.length > 0) log.info({ removed: expired }, 'deleted access keys expired longer than the retention period');
      for (const r of [registry.ownedaccesskeys, registry.teams]) {
        const removed = await r.removeDue();
        if (removed.length > 0) log.info({ resource: r.info.plural, removed }, 'removed objects whose deletion grace period ended');
      }
    } catch (err) {
      log.warn({ err }, 'maintenance failed; will retry');
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void run(), opts.intervalMs ?? 30_000);
  timer.unref();
  return () => clearInterval(timer);
}
