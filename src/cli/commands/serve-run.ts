/** What `teamkeys serve` runs: loaded by its action only, so other commands never load the server. */
import { readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { bootstrapAdmin } from '../../auth/bootstrap.js';
import { createAuthContext } from '../../server/auth/auth-context.js';
import type { FailureLimitOptions } from '../../auth/failure-limit.js';
import { createRegistry } from '../../registry/registry.js';
import { apiPrefix, buildServer } from '../../server/server.js';
import { endpointAuthorizer } from '../../server/auth/endpoint-auth.js';
import { closeGracefully } from '../../server/shutdown.js';
import { PostgresStore } from '../../store/backends/postgres.js';
import { SqliteStore } from '../../store/backends/sqlite.js';
import { LocalLease } from '../../store/lease.js';
import { CachedStore } from '../../store/cache/cached-store.js';
import { openAuditTrail } from '../../store/audit/open.js';
import { AuditRecorder } from '../../server/audit/audit-recorder.js';
import { openServeStore } from '../serve-store.js';
import { serveStoreUrl } from '../store-flags.js';
import { encryptionKeyFileName } from '../encryption-key-file.js';
import { parseDuration } from '../duration.js';
import { CliError } from '../errors.js';
import { createLogger, logFormat } from '../logging.js';
import { isLoopback, parseListen, urlHost, type ListenAddress } from '../listen.js';
import { selfSignedTls, writeKubeconfig } from '../state-files.js';
import { EmbeddedClient } from '../../client/embedded.js';
import { registerDaemonRoutes } from '../../daemon/routes.js';
import { renderText } from '../../gitops/report/text.js';
import type { Registry } from '../../registry/registry.js';
import { buildDaemon } from '../daemon-build.js';
import { daemonConfig, hasSource, type DaemonConfig } from '../daemon-setup.js';
import { withoutCredentials } from '../../gitops/source/git-url.js';
import { signInOptions, type SignInFlags } from '../signin-flags.js';
import { SignIn } from '../../signin/sign-in.js';
import { SignInMetrics } from '../../signin/metrics.js';

export interface ServeOptions extends SignInFlags {
  listen: string;
  store?: string;
  stateDir: string;
  tlsCert?: string;
  tlsKey?: string;
  insecureHttp?: boolean;
  logLevel: string;
  logFormat?: string;
  maxTtl?: string;
  activityInterval: string;
  expiredKeyRetention: string;
  warnExpiry: string;
  disableUnusedAfter?: string;
  apiGroup: string;
  authFailureLimit: string;
  requestTimeout: string;
  encryptionKeyFile?: string;
  auditLog?: string;
  auditRetention: string;
  shutdownGrace: string;
  maxWatchesPerKey: string;
  maxKeysPerUser: string;
  maxWatchesPerUser: string;
  maxWatches: string;
  minRequestTimeout: string;
}

/** Time the store and the last timers get after the connections are closed, before the process exits anyway. */
const exitMarginMs = 10_000;

function seconds(flag: string, value: string | undefined): number | undefined {
  return value === undefined ? undefined : positive(flag, value, ' of seconds');
}

function positive(flag: string, value: string, unit = ''): number {
  if (!/^\d+$/.test(value) || Number(value) === 0) throw new CliError(`${flag} must be a whole number${unit} above 0, not "${value}"`);
  return Number(value);
}

/** BURST/PER_SECOND, e.g. 50/2, or "off". */
function failureLimit(value: string): FailureLimitOptions | false {
  if (value === 'off') return false;
  const m = value.match(/^(\d+)\/(\d+(?:\.\d+)?)$/);
  if (!m || Number(m[1]) < 1 || Number(m[2]) <= 0) {
    throw new CliError(`--auth-failure-limit must be BURST/PER_SECOND (like 50/2) or off, not "${value}"`);
  }
  return { burst: Number(m[1]), perSecond: Number(m[2]) };
}

type Tls = { cert: Buffer; key: Buffer; selfSigned: boolean } | undefined;

/** HTTPS with the given certificate, plain HTTP when asked, else a self-signed certificate. */
async function chooseTls(opts: ServeOptions, listen: ListenAddress, stateDir: string): Promise<Tls> {
  if (Boolean(opts.tlsCert) !== Boolean(opts.tlsKey)) throw new CliError('--tls-cert and --tls-key go together');
  if (opts.tlsCert && opts.insecureHttp) throw new CliError('--insecure-http and --tls-cert exclude each other');
  if (opts.tlsCert) return { cert: await readFile(opts.tlsCert), key: await readFile(opts.tlsKey!), selfSigned: false };
  if (opts.insecureHttp) return undefined;
  const wildcard = listen.host === '0.0.0.0' || listen.host === '::';
  const hosts = ['localhost', '127.0.0.1', '::1', ...(wildcard ? [] : [listen.host])];
  const made = await selfSignedTls(stateDir, hosts);
  return { cert: made.cert, key: made.key, selfSigned: true };
}

/** The shortest --disable-unused-after: a key's use is written at most once a minute (--activity-interval), so a shorter window would disable keys in use. */
const minDisableUnusedAfterMs = 3_600_000;

/** --disable-unused-after as milliseconds, at least an hour. */
export function disableUnusedAfterMs(value: string): number {
  const ms = parseDuration('--disable-unused-after', value);
  if (ms < minDisableUnusedAfterMs) {
    throw new CliError(`--disable-unused-after must be at least 1h (uses are recorded at most once a minute, so a shorter window would disable keys in use), not "${value}"`);
  }
  return ms;
}

/** `teamkeys serve`: the API server until SIGTERM or SIGINT (and its sidecar when --sync-source is given). */
export async function serve(opts: ServeOptions): Promise<void> {
  const listen = parseListen(opts.listen);
  const stateDir = resolve(opts.stateDir);
  const maxTtlSeconds = seconds('--max-ttl', opts.maxTtl);
  const activityIntervalMs = seconds('--activity-interval', opts.activityInterval)! * 1000;
  const expiredKeyRetentionSeconds = seconds('--expired-key-retention', opts.expiredKeyRetention)!;
  const authFailureLimit = failureLimit(opts.authFailureLimit);
  const requestTimeoutMs = seconds('--request-timeout', opts.requestTimeout)! * 1000;
  const keyHealth = {
    warnExpiryMs: parseDuration('--warn-expiry', opts.warnExpiry),
    ...(opts.disableUnusedAfter !== undefined ? { disableUnusedAfterMs: disableUnusedAfterMs(opts.disableUnusedAfter) } : {}),
  };
  const syncConfig = hasSource(opts as unknown as Record<string, unknown>, 'sync-')
    ? await daemonConfig(opts as unknown as Record<string, unknown>, 'sync-', stateDir, { keyDir: join(stateDir, 'keys'), reportDir: join(stateDir, 'sync') })
    : undefined;
  const shutdownGraceMs = seconds('--shutdown-grace', opts.shutdownGrace)! * 1000;
  const maxKeysPerUser = positive('--max-keys-per-user', opts.maxKeysPerUser);
  const watchLimits = {
    maxPerKey: positive('--max-watches-per-key', opts.maxWatchesPerKey),
    maxPerUser: positive('--max-watches-per-user', opts.maxWatchesPerUser),
    maxTotal: positive('--max-watches', opts.maxWatches),
    minRequestTimeoutSeconds: seconds('--min-request-timeout', opts.minRequestTimeout)!,
  };
  const tls = await chooseTls(opts, listen, stateDir);
  const signInSettings = await signInOptions(opts);
  // Logs go to stderr; stdout carries the lines that say where things are (src/cli/logging.ts).
  const logger = createLogger(opts.logLevel, logFormat(opts.logFormat));
  if (!tls && !isLoopback(listen.host)) {
    logger.warn({ host: listen.host }, 'serving plain HTTP on a non-loopback address: access keys cross the network in clear text unless a TLS proxy is in front');
  }

  const auditRetentionMs = parseDuration('--audit-retention', opts.auditRetention);
  const storeUrl = serveStoreUrl(opts.store, stateDir);
  const { store, cipher } = await openServeStore(storeUrl, opts.encryptionKeyFile ?? join(stateDir, encryptionKeyFileName), logger);
  const audit = new AuditRecorder(openAuditTrail(store), logger, { retentionMs: auditRetentionMs, ...(opts.auditLog ? { logFile: resolve(opts.auditLog) } : {}) });
  const cached = new CachedStore(store, { log: logger });
  const registry = createRegistry(cached, { group: opts.apiGroup, cipher, onWrite: audit.observer, ...(maxTtlSeconds ? { keyPolicy: { maxTtlSeconds } } : {}) });
  // As kube-apiserver waits for its caches: serve from a filled cache, not from the store and a filling cache at once (bounded).
  await cached.ready(10_000);
  const adminKeyFile = join(stateDir, 'admin.key');
  const envKey = process.env.TEAMKEYS_ADMIN_KEY || undefined;
  const boot = await bootstrapAdmin(registry, {
    keyFile: adminKeyFile,
    ...(envKey ? { adminKey: envKey } : {}),
    ...(maxTtlSeconds ? { ttlSeconds: maxTtlSeconds } : {}),
  });
  if (boot.keyFile) console.log(`teamkeys: created the administrator key (user admin) in ${boot.keyFile}, mode 0600`);
  else if (boot.created) console.log('teamkeys: created the administrator key (user admin) from TEAMKEYS_ADMIN_KEY');

  const auth = await createAuthContext(registry, logger, { activityIntervalMs, failureLimit: authFailureLimit, maxKeysPerUser, identityMaxStalenessMs: signInSettings.maxStalenessMs });
  const signIn = signInSettings.signIn ? new SignIn(registry, signInSettings.signIn, logger, new SignInMetrics()) : undefined;
  // Processes sharing a database (PostgreSQL replicas, servers on one SQLite file) take turns at
  // background work: one garbage collector, one sweeper, one sidecar sync; a memory store has one process.
  const lease = store instanceof PostgresStore || store instanceof SqliteStore ? store.lease() : new LocalLease();
  const daemon = syncConfig ? sidecar(syncConfig, registry, logger, audit) : undefined;
  const app = await buildServer({
    registry,
    auth,
    logger,
    lease,
    maintenance: { expiredKeyRetentionSeconds },
    keyHealth,
    audit,
    requestTimeoutMs,
    watchLimits,
    ...(signIn ? { signIn } : {}),
    // The API server's /metrics also serves the sidecar's and sign-in's.
    moreMetrics: [...(daemon ? [daemon.metrics.registry] : []), ...(signIn ? [signIn.metrics.registry] : [])],
    ...(daemon ? { background: [{ name: 'sync', start: () => daemon.daemon.start(), stop: () => daemon.daemon.stop() }] } : {}),
    ...(tls ? { https: { cert: tls.cert, key: tls.key } } : {}),
  });
  if (daemon) {
    const routes = { health: false, metrics: false, authorize: endpointAuthorizer(auth), ...(syncConfig?.webhookSecret ? { webhookSecret: syncConfig.webhookSecret } : {}) };
    registerDaemonRoutes(app, daemon.daemon, daemon.metrics, routes);
  }
  try {
    await app.listen({ host: listen.host, port: listen.port });
  } catch (err) {
    // A port in use (or any listen failure) ends the command: the background work already
    // started (the sidecar's sync, GC) must stop with it, or the process would run on unserved.
    await app.close().catch(() => {});
    await audit.close().catch(() => {});
    await cached.close().catch(() => {});
    throw err;
  }
  // Signals are handled before anyone can learn the address: a stop right after start is clean.
  const stopped = new Promise<void>((done) => {
    const stop = (signal: string) => {
      logger.info({ signal }, 'shutting down');
      // The last resort: whatever still holds the process (a stuck store close) does not hold it forever.
      setTimeout(() => {
        logger.error({ signal, afterMs: shutdownGraceMs + exitMarginMs }, 'shutdown did not finish in time; exiting');
        process.exit(1);
      }, shutdownGraceMs + exitMarginMs).unref();
      void closeGracefully(app, { graceMs: shutdownGraceMs, log: logger })
        // Writes whose clients went away still commit: their audit events go in before the trail closes.
        .then(() => registry.drained(shutdownGraceMs))
        .then((drained) => drained || logger.warn({ graceMs: shutdownGraceMs }, 'writes still under way after the shutdown grace period; their audit events may be lost'))
        .then(() => audit.close())
        .then(() => cached.close())
        .then(done, (err: unknown) => {
          logger.error({ err }, 'shutdown failed');
          done();
        });
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : listen.port;
  const host = listen.host === '0.0.0.0' || listen.host === '::' ? 'localhost' : listen.host;
  const url = `${tls ? 'https' : 'http'}://${urlHost(host)}:${port}${apiPrefix}`;
  if (tls?.selfSigned) {
    const token = (await readFile(adminKeyFile, 'utf8').catch(() => '')).trim();
    const kubeconfig = join(stateDir, 'kubeconfig');
    await writeKubeconfig(kubeconfig, { url, caPem: tls.cert, ...(token ? { token } : {}) });
    // Without admin.key: the key came from the environment (never written to disk), or the store
    // already had its users when this state directory was new; the kubeconfig names the server only.
    const noKey = envKey
      ? `(the administrator's key came from TEAMKEYS_ADMIN_KEY): kubectl --kubeconfig ${kubeconfig} --token "$TEAMKEYS_ADMIN_KEY" get teams`
      : `(the store already had its users, so no administrator key was made in ${stateDir}): kubectl --kubeconfig ${kubeconfig} --token "$(cat YOUR_KEY_FILE)" get teams`;
    console.log(token ? `teamkeys: kubectl can use ${kubeconfig} (export KUBECONFIG=${kubeconfig})` : `teamkeys: ${kubeconfig} names this server and trusts its certificate but holds no key ${noKey}`);
  }
  console.log(`teamkeys serving on ${url}`);
  logger.info({ url, store: storeUrl.split(':')[0] }, 'serving');
  await stopped;
}

/** The sidecar: a sync daemon in this process, on the same registry, with /metrics and POST /sync. */
function sidecar(config: DaemonConfig, registry: Registry, log: Logger, audit: AuditRecorder): ReturnType<typeof buildDaemon> {
  const source = withoutCredentials(config.source.source);
  // The sidecar reads its own server's audit trail, to name who made the drift it reports.
  const built = buildDaemon(config, new EmbeddedClient(registry, 'embedded store (this server)', undefined, audit), log, (report, error) => {
    if (built.daemon.cycles !== 1) return;
    if (report) process.stdout.write(`teamkeys: first sync from ${source} (report in ${join(config.reportDir!, 'report.md')}):\n${renderText(report)}`);
    else console.log(`teamkeys: first sync from ${source} failed: ${error}`);
  });
  return built;
}
