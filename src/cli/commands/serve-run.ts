/**
 * What `teamkeys serve` runs: loaded by its action only, so other commands never load the server.
 * Three steps: serveConfig (flags -> checked config, src/cli/serve-config.ts), assemble (the
 * components built from the config, nothing listening yet) and run (listen, print where things
 * are, and on SIGTERM or SIGINT stop the components in order).
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { bootstrapAdmin } from '../../auth/bootstrap.js';
import { createAuthContext } from '../../server/auth/auth-context.js';
import { createRegistry } from '../../registry/registry.js';
import { apiPrefix, buildServer } from '../../server/server.js';
import { endpointAuthorizer } from '../../server/auth/endpoint-auth.js';
import { closeGracefully } from '../../server/shutdown.js';
import { PostgresStore } from '../../store/backends/postgres.js';
import { SqliteStore } from '../../store/backends/sqlite.js';
import { LocalLease } from '../../store/lease.js';
import { notLeading, type Leader } from '../../server/background/leader.js';
import { CachedStore } from '../../store/cache/cached-store.js';
import { openAuditTrail } from '../../store/audit/open.js';
import { AuditRecorder } from '../../server/audit/audit-recorder.js';
import { openServeStore } from '../serve-store.js';
import { selfSignedTls, writeKubeconfig } from '../state-files.js';
import { EmbeddedClient } from '../../client/embedded.js';
import { registerDaemonRoutes } from '../../daemon/routes.js';
import { renderText } from '../../gitops/report/text.js';
import type { Registry } from '../../registry/registry.js';
import { buildDaemon } from '../daemon-build.js';
import { withoutCredentials } from '../../gitops/source/git-url.js';
import { SignIn } from '../../signin/sign-in.js';
import { Provider } from '../../signin/provider.js';
import { createLogger } from '../logging.js';
import { checkListen, isLoopback, urlHost } from '../listen.js';
import { readDaemonConfig, type DaemonConfig } from '../daemon-setup.js';
import { readSignIn } from '../signin-flags.js';
import { serveConfig, type ServeConfig } from '../serve-config.js';
import type { NotificationConfig } from '../../notify/config.js';
import { CliError } from '../errors.js';
import type { ServeFlags } from './serve.js';

/** Time the store and the last timers get after the connections are closed, before the process exits anyway. */
const exitMarginMs = 10_000;
/** How long background work waits for the watch cache's fill before starting without it. */
const backgroundAfterFillMs = 120_000;

type Tls = { cert: Buffer; key: Buffer; selfSigned: boolean } | undefined;

/** The certificate as the config chose it: read from its files, or made (once) in the state directory. */
async function loadTls(config: ServeConfig): Promise<Tls> {
  const { tls, listen, stateDir } = config;
  if (tls.kind === 'files') return { cert: await readFile(tls.certFile), key: await readFile(tls.keyFile), selfSigned: false };
  if (tls.kind === 'none') return undefined;
  const wildcard = listen.host === '0.0.0.0' || listen.host === '::';
  const hosts = ['localhost', '127.0.0.1', '::1', ...(wildcard ? [] : [listen.host])];
  const made = await selfSignedTls(stateDir, hosts);
  return { cert: made.cert, key: made.key, selfSigned: true };
}

/** The server's components, built and wired but not listening. */
interface Assembled {
  config: ServeConfig;
  logger: Logger;
  tls: Tls;
  registry: Registry;
  audit: AuditRecorder;
  cached: CachedStore;
  app: Awaited<ReturnType<typeof buildServer>>;
}

/**
 * The --notifications file, checked; its problems (each at file:line:col) end the command before
 * anything starts. Loaded only when asked for: the check compiles a schema with ajv, which a
 * server without notifications need not load.
 */
async function readNotifications(file: string): Promise<NotificationConfig> {
  const { loadNotificationConfig, NotificationConfigError } = await import('../../notify/config.js');
  try {
    return loadNotificationConfig(file);
  } catch (err) {
    if (err instanceof NotificationConfigError) throw new CliError(err.message);
    throw err;
  }
}

/** Step two: opens the store, bootstraps the administrator key and builds the server (and its sidecar) from the config. */
async function assemble(config: ServeConfig): Promise<Assembled> {
  // A port in use ends the command before it makes any state, in one fatal line of the log format.
  await checkListen(config.listen).catch((err: unknown) => {
    createLogger(config.logLevel, config.logFormat);
    throw err;
  });
  // The files the flags name are read in the order the flags were checked (the sidecar's, TLS, sign-in's).
  const syncConfig = config.sync ? await readDaemonConfig(config.sync) : undefined;
  const tls = await loadTls(config);
  const signInOptions = config.signIn.signIn ? await readSignIn(config.signIn.signIn) : undefined;
  const notifications = config.notificationsFile ? await readNotifications(config.notificationsFile) : undefined;
  // Logs go to stderr; stdout carries the lines that say where things are (src/cli/logging.ts).
  const logger = createLogger(config.logLevel, config.logFormat);
  if (!tls && !isLoopback(config.listen.host)) {
    logger.warn({ host: config.listen.host }, 'serving plain HTTP on a non-loopback address: access keys cross the network in clear text unless a TLS proxy is in front');
  }

  const { maxTtlSeconds } = config;
  const { store, cipher } = await openServeStore(config.storeUrl, config.encryptionKeyFile, logger, { stateDir: config.stateDir, startEmpty: config.startEmpty });
  const audit = new AuditRecorder(openAuditTrail(store), logger, { retentionMs: config.auditRetentionMs, ...(config.auditLogFile ? { logFile: config.auditLogFile } : {}) });
  const cached = new CachedStore(store, { log: logger });
  const registry = createRegistry(cached, { group: config.apiGroup, cipher, onWrite: audit.observer, ...(maxTtlSeconds ? { keyPolicy: { maxTtlSeconds } } : {}) });
  // As kube-apiserver waits for its caches: serve from a filled cache, not from the store and a filling cache at once (bounded).
  await cached.ready(10_000);
  const boot = await bootstrapAdmin(registry, {
    keyFile: config.adminKeyFile,
    ...(config.adminKey ? { adminKey: config.adminKey } : {}),
    ...(maxTtlSeconds ? { ttlSeconds: maxTtlSeconds } : {}),
  });
  if (boot.keyFile) console.log(`teamkeys: created the administrator key (user admin) in ${boot.keyFile}, mode 0600`);
  else if (boot.created) console.log('teamkeys: created the administrator key (user admin) from TEAMKEYS_ADMIN_KEY');

  const auth = await createAuthContext(registry, logger, {
    activityIntervalMs: config.activityIntervalMs,
    failureLimit: config.authFailureLimit,
    maxKeysPerUser: config.maxKeysPerUser,
    identityMaxStalenessMs: config.signIn.maxStalenessMs,
  });
  const signIn = signInOptions ? new SignIn(registry, new Provider(signInOptions), logger, undefined, { admission: auth, cipher }) : undefined;
  // Processes sharing a database (PostgreSQL replicas, servers on one SQLite file) take turns at
  // background work: one garbage collector, one sweeper, one sidecar sync; a memory store has one process.
  const lease = store instanceof PostgresStore || store instanceof SqliteStore ? store.lease({ ttlMs: config.leaseTtlMs }) : new LocalLease();
  // The sidecar's cycles are the leader's work: they write through the registry fenced by the hold
  // that last started it (store/fence.ts), bound to the leader once the server has one, refused before.
  const syncWork = 'sync';
  let leader: Leader | undefined;
  const fencedForSync = registry.fencedBy(() => (leader ? leader.fenceOnceStarted(syncWork) : notLeading));
  const daemon = syncConfig ? await sidecar(syncConfig, fencedForSync, logger, audit) : undefined;
  const app = await buildServer({
    registry,
    auth,
    logger,
    lease,
    maintenance: { expiredKeyRetentionSeconds: config.expiredKeyRetentionSeconds },
    // The lease and the key health sweep wait for the filled cache (bounded): at a million keys the
    // fill outlasts the wait before listening, and their first passes would read the database beside it.
    synced: () => cached.ready(backgroundAfterFillMs),
    keyHealth: config.keyHealth,
    leakReports: { gitHubKeysUrl: config.gitHubKeysUrl },
    ...(notifications ? { notifications: { config: notifications } } : {}),
    audit,
    requestTimeoutMs: config.requestTimeoutMs,
    watchLimits: config.watchLimits,
    anonymousBodies: config.anonymousBodies,
    ...(signIn ? { signIn } : {}),
    // The API server's /metrics also serves the sidecar's and sign-in's.
    moreMetrics: [...(daemon ? [daemon.metrics.registry] : []), ...(signIn ? [signIn.provider.metrics.registry] : [])],
    ...(daemon ? { background: [{ name: syncWork, start: () => daemon.daemon.start(), stop: () => daemon.daemon.stop() }] } : {}),
    ...(tls ? { https: { cert: tls.cert, key: tls.key } } : {}),
  });
  leader = app.leader;
  if (daemon) {
    const routes = { health: false, metrics: false, authorize: endpointAuthorizer(auth), ...(syncConfig?.webhookSecret ? { webhookSecret: syncConfig.webhookSecret } : {}) };
    registerDaemonRoutes(app, daemon.daemon, daemon.metrics, routes);
  }
  return { config, logger, tls, registry, audit, cached, app };
}

/** Stops the components in order on the first SIGTERM or SIGINT: connections (with their grace), writes in flight, the audit trail, the store. */
function stopOnSignal({ config, logger, app, registry, audit, cached }: Assembled): Promise<void> {
  const graceMs = config.shutdownGraceMs;
  return new Promise<void>((done) => {
    const stop = (signal: string) => {
      logger.info({ signal }, 'shutting down');
      // The last resort: whatever still holds the process (a stuck store close) does not hold it forever.
      setTimeout(() => {
        logger.error({ signal, afterMs: graceMs + exitMarginMs }, 'shutdown did not finish in time; exiting');
        process.exit(1);
      }, graceMs + exitMarginMs).unref();
      void closeGracefully(app, { graceMs, log: logger })
        // Writes whose clients went away still commit: their audit events go in before the trail closes.
        .then(() => registry.drained(graceMs))
        .then((drained) => drained || logger.warn({ graceMs }, 'writes still under way after the shutdown grace period; their audit events may be lost'))
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
}

/** Tells where the server is: the kubeconfig written for a self-signed certificate, and the URL. */
async function printWhere({ config, tls }: Assembled, url: string): Promise<void> {
  if (tls?.selfSigned) {
    const token = (await readFile(config.adminKeyFile, 'utf8').catch(() => '')).trim();
    const kubeconfig = join(config.stateDir, 'kubeconfig');
    await writeKubeconfig(kubeconfig, { url, caPem: tls.cert, ...(token ? { token } : {}) });
    // Without admin.key: the key came from the environment (never written to disk), or the store
    // already had its users when this state directory was new; the kubeconfig names the server only.
    const noKey = config.adminKey
      ? `(the administrator's key came from TEAMKEYS_ADMIN_KEY): kubectl --kubeconfig ${kubeconfig} --token "$TEAMKEYS_ADMIN_KEY" get teams`
      : `(the store already had its users, so no administrator key was made in ${config.stateDir}): kubectl --kubeconfig ${kubeconfig} --token "$(cat YOUR_KEY_FILE)" get teams`;
    console.log(token ? `teamkeys: kubectl can use ${kubeconfig} (export KUBECONFIG=${kubeconfig})` : `teamkeys: ${kubeconfig} names this server and trusts its certificate but holds no key ${noKey}`);
  }
  console.log(`teamkeys serving on ${url}`);
}

/** Step three: listens, says where, and returns once a signal has stopped everything. */
async function run(assembled: Assembled): Promise<void> {
  const { config, logger, tls, app, audit, cached } = assembled;
  const { listen } = config;
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
  const stopped = stopOnSignal(assembled);
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : listen.port;
  const host = listen.host === '0.0.0.0' || listen.host === '::' ? 'localhost' : listen.host;
  const url = `${tls ? 'https' : 'http'}://${urlHost(host)}:${port}${apiPrefix}`;
  await printWhere(assembled, url);
  logger.info({ url, store: config.storeUrl.split(':')[0] }, 'serving');
  await stopped;
}

/** `teamkeys serve`: the API server until SIGTERM or SIGINT (and its sidecar when --sync-source is given). */
export async function serve(flags: ServeFlags): Promise<void> {
  await run(await assemble(serveConfig(flags)));
}

/** The sidecar: a sync daemon in this process, on the same registry, with /metrics and POST /sync. */
async function sidecar(config: DaemonConfig, registry: Registry, log: Logger, audit: AuditRecorder): ReturnType<typeof buildDaemon> {
  const source = withoutCredentials(config.source.source);
  // The sidecar reads its own server's audit trail, to name who made the drift it reports.
  const built = await buildDaemon(config, new EmbeddedClient(registry, 'embedded store (this server)', undefined, audit), log, (report, error) => {
    if (built.daemon.cycles !== 1) return;
    if (report) process.stdout.write(`teamkeys: first sync from ${source} (report in ${join(config.reportDir!, 'report.md')}):\n${renderText(report)}`);
    else console.log(`teamkeys: first sync from ${source} failed: ${error}`);
  });
  return built;
}
