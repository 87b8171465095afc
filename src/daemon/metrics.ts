/** The daemon's Prometheus metrics (prom-client), one registry per daemon. */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { servedKinds } from '../api/resources.js';
import type { Report } from '../gitops/report/report.js';

export class DaemonMetrics {
  readonly registry = new Registry();
  readonly reconciles = new Counter({ name: 'teamkeys_reconcile_total', help: 'Reconcile cycles by result.', labelNames: ['result'], registers: [this.registry] });
  readonly duration = new Histogram({
    name: 'teamkeys_reconcile_duration_seconds',
    help: 'How long reconcile cycles took, by result.',
    labelNames: ['result'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });
  readonly drifted = new Gauge({ name: 'teamkeys_drifted_objects', help: 'Objects whose live state drifted from git at the last cycle, by kind.', labelNames: ['kind'], registers: [this.registry] });
  readonly lastSuccess = new Gauge({ name: 'teamkeys_last_success_timestamp_seconds', help: 'When a cycle last completed without error (Unix time).', registers: [this.registry] });
  readonly unchanged = new Counter({
    name: 'teamkeys_reconcile_unchanged_total',
    help: 'Cycles that found the same revision (or folder) and no change to a managed object, so read, planned and wrote nothing.',
    registers: [this.registry],
  });
  readonly apiRequests = new Counter({ name: 'teamkeys_api_requests_total', help: 'Requests to the management API by verb and status code.', labelNames: ['verb', 'code'], registers: [this.registry] });

  /** Records a finished cycle: `error` when it could not run (source or server unreachable). */
  cycle(result: Report['outcome'] | 'error', seconds: number, report?: Report): void {
    this.reconciles.inc({ result });
    this.duration.observe({ result }, seconds);
    if (!report) return;
    this.drifted.reset();
    for (const { kind } of servedKinds) this.drifted.set({ kind }, report.objects.filter((o) => o.kind === kind && o.drift).length);
    if (['clean', 'changes', 'applied'].includes(result)) this.lastSuccess.setToCurrentTime();
  }
}
