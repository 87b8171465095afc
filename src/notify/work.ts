/** The notifier as the server runs it: background work of the leader, told the key health sweep's window and clock. */
import type { Logger } from 'pino';
import type { Registry as MetricsRegistry } from 'prom-client';
import type { ActivityRecorder } from '../auth/activity.js';
import type { Registry } from '../registry/registry.js';
import type { BackgroundWork } from '../server/background/leader.js';
import type { KeyHealthSweepOptions } from '../server/key-health-sweep.js';
import { notificationMetrics } from './metrics.js';
import { Notifier, type NotifierOptions } from './notifier.js';

/** What the server is given; the window, the unused-key rule and the clock default to the key health sweep's. */
export type NotificationsOptions = NotifierOptions;

export function notifierWork(
  registry: Registry,
  activity: ActivityRecorder,
  log: Logger,
  metrics: MetricsRegistry,
  opts: NotificationsOptions,
  health: KeyHealthSweepOptions,
): { notifier: Notifier; work: BackgroundWork } {
  const notifier = new Notifier(registry, (name) => activity.lastUsed(name), log, notificationMetrics(metrics), {
    ...(health.warnExpiryMs !== undefined ? { warnExpiryMs: health.warnExpiryMs } : {}),
    ...(health.disableUnusedAfterMs !== undefined ? { disableUnusedAfterMs: health.disableUnusedAfterMs } : {}),
    ...(health.now ? { now: health.now } : {}),
    ...opts,
  });
  return { notifier, work: { name: 'notifications', start: () => notifier.start(), stop: () => notifier.stop() } };
}
