/** Background housekeeping: compaction of old history and removal of terminating objects that are due. */
import type { Logger } from 'pino';
import type { Registry } from '../registry/registry.js';

export interface MaintenanceOptions {
  intervalMs?: number;
  /** Revisions of history kept for watches and paged lists that start in the past. */
  retainRevisions?: number;
}

/** Starts the housekeeping timer; the returned function stops it. */
export function startMaintenance(registry: Registry, log: Logger, opts: MaintenanceOptions = {}): () => void {
  const retain = opts.retainRevisions ?? 10_000;
  let running = false;
  const run = async () => {
    if (running) return;
    running = true;
    try {
      const current = await registry.store.currentRevision();
      if (current - retain > (await registry.store.compactedRevision())) await registry.store.compact(current - retain);
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
