/** Background housekeeping: compaction of old history and removal of terminating objects that are due. */
import type { Logger } from 'pino';
import type { ActivityRecorder } from '../../auth/activity.js';
import { defaultExpiredKeyRetentionSeconds, removeExpiredKeys } from '../../auth/expired-keys.js';
import type { Registry } from '../../registry/registry.js';
import { PeriodicRunner } from '../../background/periodic-runner.js';
import type { Controller } from '../../background/supervisor.js';

export interface MaintenanceOptions {
  intervalMs?: number;
  /** Revisions of history kept for watches and paged lists that start in the past. */
  retainRevisions?: number;
  /** Expired keys are deleted this long after they expired. */
  expiredKeyRetentionSeconds?: number;
  now?: () => Date;
}

/** The housekeeping controller of the leader: every interval (30 s), each step in turn. */
export function maintenance(registry: Registry, activity: ActivityRecorder, log: Logger, opts: MaintenanceOptions = {}): Controller {
  const retain = opts.retainRevisions ?? 10_000;
  const now = opts.now ?? (() => new Date());
  const retention = opts.expiredKeyRetentionSeconds ?? defaultExpiredKeyRetentionSeconds;
  // Each step on its own: one failing (storage out of reach, a bug) is logged and does not hold the others back.
  const steps: [string, () => Promise<void>][] = [
    ['compaction', async () => {
      const current = await registry.store.currentRevision();
      if (current - retain > (await registry.store.compactedRevision())) await registry.store.compact(current - retain);
    }],
    ['expired-key removal', async () => {
      const expired = await removeExpiredKeys(registry.ownedaccesskeys, activity, now(), retention);
      if (expired.length > 0) log.info({ removed: expired }, 'deleted access keys expired longer than the retention period');
    }],
    ...[registry.ownedaccesskeys, registry.teams].map((r): [string, () => Promise<void>] => [`${r.info.plural} deletion`, async () => {
      const removed = await r.removeDue();
      if (removed.length > 0) log.info({ resource: r.info.plural, removed }, 'removed objects whose deletion grace period ended');
    }]),
  ];
  // One pass at a time: a pass that outlasts the interval is not run twice at once.
  const runner = new PeriodicRunner({
    intervalMs: opts.intervalMs ?? 30_000,
    onError: (err) => log.warn({ err }, 'maintenance pass failed'),
    pass: async () => {
      for (const [step, fn] of steps) {
        try {
          await fn();
        } catch (err) {
          log.warn({ err, step }, 'maintenance step failed; will retry at the next interval');
        }
      }
    },
  });
  return { name: 'maintenance', start: () => runner.start(), stop: () => runner.stop() };
}
