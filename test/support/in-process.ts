/** The HTTP server in this process on a random loopback port, for tests that reach into its store. */
import type { FastifyInstance } from 'fastify';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino, { type Logger } from 'pino';
import type { ActivityRecorder } from '../../src/auth/activity.js';
import { bootstrapAdmin } from '../../src/auth/bootstrap.js';
import { createRegistry, type Registry } from '../../src/registry/registry.js';
import { createAuthContext } from '../../src/server/auth/auth-context.js';
import { apiPrefix, buildServer } from '../../src/server/server.js';
import { closeGracefully } from '../../src/server/shutdown.js';
import { MemoryStore } from '../../src/store/backends/memory.js';
import { CachedStore } from '../../src/store/cache/cached-store.js';
import type { Store } from '../../src/store/types.js';
import type { Lease } from '../../src/store/lease.js';
import type { Leader } from '../../src/server/background/leader.js';
import { eventually } from './eventually.js';
import type { Clock } from '../../src/clock.js';
import { AuditRecorder } from '../../src/server/audit/audit-recorder.js';
import { openAuditTrail } from '../../src/store/audit/open.js';
import type { FailureLimitOptions } from '../../src/auth/failure-limit.js';
import type { RouteEntry } from '../../src/server/auth/request-gate.js';
import type { KeyHealthSweep, KeyHealthSweepOptions } from '../../src/server/key-health-sweep.js';
import type { WatchLimits } from '../../src/server/watch/watch-limits.js';
import type { AccessRequestExpiry } from '../../src/server/access-request-expiry.js';
import type { LeakReportOptions } from '../../src/server/routes/leak-reports.js';
import type { Notifier } from '../../src/notify/notifier.js';
import type { NotificationsOptions } from '../../src/notify/work.js';

/** The administrator key every test server starts with. */
import type { TokenExchangeOptions } from '../../src/federation/exchange.js';
import type { AnonymousBodyLimits } from '../../src/server/auth/anonymous-bodies.js';
export const adminKey = `TestAdmin${'k'.repeat(55)}`;
/**
 * The key file a bootstrap given `adminKey` never writes. Not /dev/null: a mutant that drops the
 * early return (npm run test:mutation) writes and chmods it 0600, and as root that once left
 * /dev/null unusable for every other user of the machine (PostgreSQL's initdb).
 */
export const unusedAdminKeyFile = join(tmpdir(), 'teamkeys-unused-admin.key');
export const adminHeaders = { Authorization: `Bearer ${adminKey}` };

export interface InProcess {
  base: string;
  api: string;
  registry: Registry;
  /** The server's record of key use (memory that must not outlive the keys). */
  activity: ActivityRecorder;
  /** Every route the server registered (methods and path pattern), as the request gate saw them. */
  routes: RouteEntry[];
  /** The key health sweep (tests run one with `await keyHealthSweep.sweep()`). */
  keyHealthSweep?: KeyHealthSweep;
  /** Marks Active AccessRequests past their time Expired (`await accessRequestExpiry.sweep()`). */
  accessRequestExpiry: AccessRequestExpiry;
  /** The notifier, with `notifications` (tests run a pass with `await notifier.run()`). */
  notifier?: Notifier;
  /** fetch with the administrator's key, unless the call sets its own Authorization. */
  fetch(url: string, init?: RequestInit): Promise<Response>;
  /** fastify's inject: a request from a peer address no loopback socket can have (IPv6 outside ::1). */
  inject: FastifyInstance['inject'];
  close(): Promise<void>;
}

export interface InProcessOptions {
  bookmarkIntervalMs?: number;
  /** `teamkeys serve --max-keys-per-user` (default 100). */
  maxKeysPerUser?: number;
  activityIntervalMs?: number;
  maxTtlSeconds?: number;
  logger?: Logger;
  /** The store to serve (default: a new MemoryStore behind the watch cache, as teamkeys serve runs); tests that inject faults pass their own. */
  store?: Store;
  /** false: no garbage collector, for tests of what a leftover object does. */
  garbageCollector?: boolean;
  /** The time for everything that decides by it (a ManualClock's now). */
  now?: Clock;
  /** Options of the key health sweep (serve's --warn-expiry, --disable-unused-after). */
  keyHealth?: KeyHealthSweepOptions;
  /** Record an audit trail (in memory), served at /kubernetes/management/apis/audit.../events. */
  audit?: boolean;
  /** Watches open at once per key, per user and in total (serve's --max-watches-per-key and so on). */
  watchLimits?: Partial<WatchLimits>;
  /** The budget of failed authentications per client address (serve's --auth-failure-limit). */
  failureLimit?: FailureLimitOptions | false;
  /** POST /auth/revoke's budget and where GitHub's secret scanning keys are fetched (serve --github-secret-scanning-keys-url). */
  leakReports?: LeakReportOptions;
  /** Owner notifications (serve's --notifications file, parsed). */
  notifications?: NotificationsOptions;
  /** The token exchange's options (the CA of a test's job-token issuer: test/federation/issuer.ts). */
  federation?: TokenExchangeOptions;
  /** What the lease and the key health sweep wait for (serve passes its watch cache's fill). */
  synced?: () => Promise<unknown>;
  /** The background-work lease (default: this process's alone, always held). */
  lease?: Lease;
  /** Bodies read from clients without a key at once (auth/anonymous-bodies.ts; default its defaults). */
  anonymousBodies?: AnonymousBodyLimits;
}

export async function startInProcess(opts: InProcessOptions = {}): Promise<InProcess> {
  const logger = opts.logger ?? pino({ level: 'silent' });
  const store = opts.store ?? new CachedStore(new MemoryStore());
  // The events are stored with the writes, so the trail is the store's own.
  const audit = opts.audit ? new AuditRecorder(openAuditTrail(store), logger, opts.now ? { now: opts.now } : {}) : undefined;
  const registry = createRegistry(store, {
    ...(opts.maxTtlSeconds ? { keyPolicy: { maxTtlSeconds: opts.maxTtlSeconds } } : {}),
    ...(opts.now ? { now: opts.now } : {}),
    ...(audit ? { onWrite: audit.observer } : {}),
  });
  await bootstrapAdmin(registry, { adminKey, keyFile: unusedAdminKeyFile, ...(opts.maxTtlSeconds ? { ttlSeconds: opts.maxTtlSeconds } : {}) });
  const auth = await createAuthContext(registry, logger, { ...(opts.maxKeysPerUser !== undefined ? { maxKeysPerUser: opts.maxKeysPerUser } : {}), ...(opts.failureLimit !== undefined ? { failureLimit: opts.failureLimit } : {}), ...(opts.activityIntervalMs ? { activityIntervalMs: opts.activityIntervalMs } : {}), ...(opts.now ? { now: opts.now } : {}) });
  const app = await buildServer({
    registry,
    auth,
    logger,
    maintenance: false,
    ...(audit ? { audit } : {}),
    ...(opts.garbageCollector === false ? { garbageCollector: false } : {}),
    ...(opts.bookmarkIntervalMs ? { bookmarkIntervalMs: opts.bookmarkIntervalMs } : {}),
    ...(opts.watchLimits ? { watchLimits: opts.watchLimits } : {}),
    ...(opts.leakReports ? { leakReports: opts.leakReports } : {}),
    ...(opts.notifications ? { notifications: opts.notifications } : {}),
    ...(opts.federation || opts.now ? { federation: { ...(opts.now ? { now: opts.now } : {}), ...opts.federation } } : {}),
    ...(opts.keyHealth || opts.now ? { keyHealth: { ...(opts.now ? { now: opts.now } : {}), ...opts.keyHealth } } : {}),
    ...(opts.synced ? { synced: opts.synced } : {}),
    ...(opts.lease ? { lease: opts.lease } : {}),
    ...(opts.anonymousBodies ? { anonymousBodies: opts.anonymousBodies } : {}),
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  // Each of the leader's work writes under the hold that started it (Leader.fenceOf): a test that
  // runs one directly (accessRequestExpiry.sweep(), notifier.run()) does so once the leader has.
  if (!opts.lease && !opts.synced) await leaderWorkStarted(app.leader);
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const base = `http://127.0.0.1:${port}`;
  return {
    base,
    api: `${base}${apiPrefix}/apis/management.service/v1`,
    registry,
    routes: app.routeTable,
    activity: auth.activity,
    ...(app.keyHealthSweep ? { keyHealthSweep: app.keyHealthSweep } : {}),
    accessRequestExpiry: app.accessRequestExpiry,
    ...(app.notifier ? { notifier: app.notifier } : {}),
    inject: app.inject.bind(app) as FastifyInstance['inject'],
    fetch: (url, init = {}) => fetch(url, { ...init, headers: { ...adminHeaders, ...(init.headers as Record<string, string> | undefined) } }),
    // As `teamkeys serve` closes (shutdown.ts): an ended watch leaves its connection idle after
    // server.close() swept the idle ones, and app.close() alone would wait for it.
    close: async () => {
      await closeGracefully(app, { graceMs: 2_000, log: logger });
      await registry.store.close();
    },
  };
}

/** Resolves once the leader holds the lease and has started all of its work (at most 5 s). */
async function leaderWorkStarted(leader: Leader): Promise<void> {
  const started = () => {
    if (leader.isLeader && Object.values(leader.workStates()).every((s) => s === 'running')) return true;
    throw new Error(`leading: ${leader.isLeader}, work: ${JSON.stringify(leader.workStates())}`);
  };
  await eventually('the leader has started all of its work', started, { timeoutMs: 5_000, intervalMs: 5 });
}

/** Reads a watch response line by line until `count` events or the stream ends. */
export async function readEvents(res: Response, count: number, timeoutMs = 5000): Promise<{ type: string; object: Record<string, unknown> }[]> {
  const events: { type: string; object: Record<string, unknown> }[] = [];
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const deadline = Date.now() + timeoutMs;
  try {
    while (events.length < count && Date.now() < deadline) {
      const chunk = await Promise.race([reader.read(), new Promise<{ done: true; value: undefined }>((r) => setTimeout(() => r({ done: true, value: undefined }), deadline - Date.now()))]);
      if (chunk.done) break;
      buffer += decoder.decode(chunk.value, { stream: true });
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        events.push(JSON.parse(buffer.slice(0, nl)) as { type: string; object: Record<string, unknown> });
        buffer = buffer.slice(nl + 1);
      }
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return events;
}
