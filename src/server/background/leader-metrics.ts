/**
 * The leader's series on /metrics: whether this replica leads, and its lease's renewals, losses
 * and refused (fenced) writes. An alert on `sum(teamkeys_leader) != 1` over the replicas finds
 * no leader or two; a loss count that grows finds a lease that keeps slipping.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import type { LeaderEvents } from './leader.js';

export function leaderMetrics(registry: Registry, replica: string): LeaderEvents {
  const leader = new Gauge({
    name: 'teamkeys_leader',
    help: 'Whether this replica holds the background-work lease and runs background work (1) or not (0).',
    labelNames: ['replica'],
    registers: [registry],
  });
  const renewals = new Counter({ name: 'teamkeys_lease_renewals_total', help: 'Renewals of the background-work lease that kept it.', registers: [registry] });
  const losses = new Counter({ name: 'teamkeys_lease_losses_total', help: 'Times this replica lost the background-work lease while holding it (renewal refused or overdue, connection closed).', registers: [registry] });
  const refused = new Counter({
    name: 'teamkeys_lease_fenced_writes_total',
    help: 'Background writes the store refused because their fencing token was stale (this replica had lost the lease, or its work never started under it).',
    registers: [registry],
  });
  return {
    leading: (yes) => leader.set({ replica }, yes ? 1 : 0),
    renewed: () => renewals.inc(),
    lost: () => losses.inc(),
    refused: () => refused.inc(),
  };
}
