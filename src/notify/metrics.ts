/**
 * The notifier's series on /metrics: every attempt by receiver, event and outcome (delivered,
 * failed, gave_up), and whether a receiver keeps failing, for an alert on the alerting itself.
 */
import { Counter, Gauge, type Registry } from 'prom-client';

export interface NotificationMetrics {
  attempt(receiver: string, event: string, outcome: 'delivered' | 'failed' | 'gave_up'): void;
  failing(receiver: string, yes: boolean): void;
}

export function notificationMetrics(registry: Registry): NotificationMetrics {
  const total = new Counter({
    name: 'teamkeys_notifications_total',
    help: 'Notification delivery attempts, by receiver, event (Digest for the daily digest) and outcome (delivered, failed, gave_up).',
    labelNames: ['receiver', 'event', 'outcome'],
    registers: [registry],
  });
  const failing = new Gauge({
    name: 'teamkeys_notification_receiver_failing',
    help: 'Whether a receiver has failed its last attempts in a row (1) or answers (0): its messages wait in the outbox.',
    labelNames: ['receiver'],
    registers: [registry],
  });
  return {
    attempt: (receiver, event, outcome) => total.inc({ receiver, event, outcome }),
    failing: (receiver, yes) => failing.set({ receiver }, yes ? 1 : 0),
  };
}
