/**
 * The server's background controllers, and who runs each: the server's supervisor runs those of
 * every replica (key activity, the leader election, the key health sweep's gauges) from the moment
 * the server is ready until it closes; the leader runs the rest (housekeeping, collection, sweeps
 * that write, the identity refresh, notifications, the sidecar's sync) while it holds the lease.
 */
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { ActivityRecorder } from '../../auth/activity.js';
import { defaultStopBoundMs, Supervisor, type Controller } from '../../background/supervisor.js';
import type { TokenExchange } from '../../federation/exchange.js';
import { tokenUsesCollection } from '../../federation/collection.js';
import { storedRulesCheck } from '../../federation/stored-rules.js';
import type { Notifier } from '../../notify/notifier.js';
import { notifierWork, type NotificationsOptions } from '../../notify/work.js';
import { GarbageCollector } from '../../registry/garbage-collector.js';
import type { Registry } from '../../registry/registry.js';
import type { SignIn } from '../../signin/sign-in.js';
import { IdentityRefresher } from '../../signin/refresh.js';
import { LocalLease, type Lease } from '../../store/lease.js';
import { AccessRequestExpiry } from '../access-request-expiry.js';
import type { AuditRecorder } from '../audit/audit-recorder.js';
import { auditTrimming } from '../audit/audit-trimming.js';
import type { AuthContext } from '../auth/guard.js';
import { KeyHealthSweep, type KeyHealthSweepOptions } from '../key-health-sweep.js';
import type { ServerMetrics } from '../metrics.js';
import { Leader, type BackgroundWork } from './leader.js';
import { leaderMetrics } from './leader-metrics.js';
import { maintenance, type MaintenanceOptions } from './maintenance.js';

/** What the server's background is made of (the ServerOptions that decide it). */
export interface BackgroundOptions {
  registry: Registry;
  auth: AuthContext & { activity: ActivityRecorder };
  logger: Logger;
  /** Run the garbage collector in this process (default true). */
  garbageCollector?: boolean;
  /** Who may run background work; replicas on one database share it (default: always this process). */
  lease?: Lease;
  /** This replica's name on the teamkeys_leader metric (default host/pid). */
  replica?: string;
  /** More background work to run only while holding the lease (the sidecar's sync daemon). */
  background?: BackgroundWork[];
  maintenance?: MaintenanceOptions | false;
  /** The audit trail the registry's writes go to; trimmed on the leader. */
  audit?: AuditRecorder;
  /** Sign-in through an OpenID Connect provider: the identity refresh runs on the leader. */
  signIn?: SignIn;
  /** The key health sweep (expiry gauges and warnings, --disable-unused-after); false: none. */
  keyHealth?: KeyHealthSweepOptions | false;
  /** Owner notifications (serve --notifications): receivers, routes, and the outbox the leader sends. */
  notifications?: NotificationsOptions;
  /** How long the close waits for each controller's stop before going on without it (default 5 s). */
  stopBoundMs?: number;
  /**
   * Resolves once the watch cache is filled (or its wait is over): the leader election and the key
   * health sweep start only then, as kube's controllers wait for their informers to sync. Otherwise
   * the first passes over a large store read it from the database while the cache fills from it.
   */
  synced?: () => Promise<unknown>;
}

export interface ServerBackground {
  /** Started when the server is ready, stopped when it closes. */
  supervisor: Supervisor;
  leader: Leader;
  keyHealthSweep: KeyHealthSweep | undefined;
  accessRequestExpiry: AccessRequestExpiry;
  notifier: Notifier | undefined;
}

export function serverBackground(opts: BackgroundOptions, metrics: ServerMetrics, exchange: TokenExchange): ServerBackground {
  const { logger: log } = opts;
  const bound = opts.stopBoundMs !== undefined ? { stopBoundMs: opts.stopBoundMs } : {};
  const work: BackgroundWork[] = [];
  let leader: Leader | undefined;
  // Each of the leader's work reads and writes through a view of its own: every write carries the
  // fence of the hold that last started that work (Leader.fenceOf, store/fence.ts), and none gets
  // through on a replica where it never started. A name here that is not the work's fails closed.
  // The registry itself is the requests'; only the key health sweep, on every replica, reads it.
  const fencedNames = new Set<string>();
  const fencedFor = (name: string) => (fencedNames.add(name), opts.registry.fencedBy(() => leader!.fenceOf(name)));
  if (opts.maintenance !== false) work.push(maintenance(fencedFor('maintenance'), opts.auth.activity, log, opts.maintenance));
  if (opts.audit) work.push(auditTrimming(opts.audit, log));
  const accessRequestExpiry = new AccessRequestExpiry(fencedFor('access-request-expiry'), log, opts.auth.now ?? (() => new Date()));
  work.push(accessRequestExpiry);
  if (opts.garbageCollector !== false) work.push(new GarbageCollector(fencedFor('garbage-collector'), log));
  work.push(tokenUsesCollection(exchange, fencedFor('token-uses').store, log));
  // Reads only: through the requests' registry, no fenced view.
  work.push(storedRulesCheck(opts.registry, log));
  if (opts.signIn) work.push(new IdentityRefresher(fencedFor('identity-refresh'), opts.signIn.provider, log, { intervalMs: opts.signIn.opts.refreshIntervalMs, concurrency: opts.signIn.opts.refreshConcurrency, ...(opts.signIn.opts.maxStalenessMs !== undefined ? { maxStalenessMs: opts.signIn.opts.maxStalenessMs } : {}) }));
  // On every replica (each one's /metrics is whole); it logs and disables only while leading, and
  // sweeps once more on taking the lease, so a new leader need not wait a whole interval. It reads
  // through the registry, and disables (while leading, checked at each sweep) through a view fenced
  // by the current hold: a sweep of every replica's own timer is no pass of the leader's.
  const keyHealthSweep = opts.keyHealth === false ? undefined : new KeyHealthSweep(opts.registry, opts.auth, log, metrics, () => leader?.isLeader === true, opts.keyHealth, opts.registry.fencedBy(() => leader!.currentFence()));
  if (keyHealthSweep) work.push({ name: 'key-health', start: () => void keyHealthSweep.sweep(), stop: () => {} });
  let notifier: Notifier | undefined;
  if (opts.notifications) {
    const made = notifierWork(fencedFor('notifications'), opts.auth.activity, log, metrics.registry, opts.notifications, opts.keyHealth || {});
    notifier = made.notifier;
    work.push(made.work);
  }
  // A view named after no work would refuse every write of the work given it: a mistake, said at once.
  const unknown = [...fencedNames].filter((n) => !work.some((w) => w.name === n));
  if (unknown.length > 0) throw new Error(`fenced views for background work that does not run: ${unknown.join(', ')}`);
  const replica = opts.replica ?? `${hostname()}/${process.pid}`;
  leader = new Leader(opts.lease ?? new LocalLease(), [...work, ...(opts.background ?? [])], log, undefined, leaderMetrics(metrics.registry, replica), opts.stopBoundMs);
  const leading = leader;
  const workCount = work.length + (opts.background ?? []).length;
  const everyReplica: Controller[] = [
    { name: 'key-activity', start: () => opts.auth.activity.start(), stop: () => opts.auth.activity.stop() },
    // Each of the leader's work is bounded on its own (and named when late); then the lease is released.
    afterSync({ name: 'leader', start: () => leading.start(), stop: () => leading.stop(), stopBoundMs: (workCount + 1) * (opts.stopBoundMs ?? defaultStopBoundMs) }, opts.synced, log),
    ...(keyHealthSweep ? [afterSync(keyHealthSweep, opts.synced, log)] : []),
  ];
  const supervisor = new Supervisor(everyReplica, log, bound);
  return { supervisor, leader, keyHealthSweep, accessRequestExpiry, notifier };
}

/**
 * The controller, started once `synced` resolves rather than at once (not at all if stopped
 * meanwhile). Its start is not awaited by the supervisor: the server serves while the cache fills.
 */
function afterSync(c: Controller, synced: (() => Promise<unknown>) | undefined, log: Logger): Controller {
  if (!synced) return c;
  let generation = 0;
  return {
    name: c.name,
    ...(c.stopBoundMs !== undefined ? { stopBoundMs: c.stopBoundMs } : {}),
    start: () => {
      const mine = ++generation;
      void synced()
        .catch(() => undefined)
        .then(() => (mine === generation ? c.start() : undefined))
        .catch((err: unknown) => log.warn({ err, controller: c.name }, 'background controller could not start'));
    },
    stop: () => {
      generation++;
      return c.stop();
    },
  };
}
