/** Background work that trims the audit trail to its retention period, at start and then hourly. */
import type { Logger } from 'pino';
import type { BackgroundWork } from '../background/leader.js';
import type { AuditRecorder } from './audit-recorder.js';

/** How often to trim: hourly, or sooner for a retention shorter than two hours (tests use seconds). */
export function trimIntervalMs(retentionMs: number): number {
  return Math.max(1_000, Math.min(3_600_000, Math.floor(retentionMs / 2)));
}

/** The background work that keeps the trail within its retention period. */
export function auditTrimming(audit: AuditRecorder, log: Logger): BackgroundWork {
  let timer: NodeJS.Timeout | undefined;
  const run = () =>
    void audit.trim().then(
      (n) => n > 0 && log.info({ removed: n }, 'trimmed audit events older than the retention period'),
      (err: unknown) => log.warn({ err }, 'trimming the audit trail failed; will retry'),
    );
  return {
    name: 'audit-retention',
    start: () => {
      run();
      timer = setInterval(run, trimIntervalMs(audit.retentionMs));
      timer.unref();
    },
    stop: () => clearInterval(timer),
  };
}
