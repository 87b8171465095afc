/** Background work that trims the audit trail to its retention period, at start and then hourly. */
import type { Logger } from 'pino';
import type { BackgroundWork } from '../background/leader.js';
import type { AuditRecorder } from './audit-recorder.js';
import { PeriodicRunner } from '../../background/periodic-runner.js';

/** How often to trim: hourly, or sooner for a retention shorter than two hours (tests use seconds). */
export function trimIntervalMs(retentionMs: number): number {
  return Math.max(1_000, Math.min(3_600_000, Math.floor(retentionMs / 2)));
}

/** The background work that keeps the trail within its retention period. */
export function auditTrimming(audit: AuditRecorder, log: Logger): BackgroundWork {
  const runner = new PeriodicRunner({
    intervalMs: trimIntervalMs(audit.retentionMs),
    pass: async () => {
      const n = await audit.trim();
      if (n > 0) log.info({ removed: n }, 'trimmed audit events older than the retention period');
    },
    onError: (err) => log.warn({ err }, 'trimming the audit trail failed; will retry'),
  });
  // A trim at start, then every interval; the close waits for a trim under way (the trail closes after).
  return { name: 'audit-retention', start: () => runner.start(0), stop: () => runner.stop() };
}
