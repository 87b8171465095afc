/** The HTTP server of the management API: fastify routes over a Registry. */
import Fastify, { LogController, type FastifyInstance, type FastifyRequest } from 'fastify';
import compress from '@fastify/compress';
import type { Logger } from 'pino';
import { servedModels } from '../api/model.js';
import type { Registry } from '../registry/registry.js';
import { maxBodyBytes, preDecodeBody } from './content.js';
import { handleClientError } from './client-errors.js';
import { handleError } from './errors.js';
import { registerDiscoveryRoutes } from './routes/discovery.js';
import { registerListedKindRoutes } from './routes/listed-kinds.js';
import { registerHealthRoutes } from './routes/health.js';
import { registerResourceRoutes } from './routes/resources.js';
import { registerAuditRoutes } from './routes/audit.js';
import { registerSelfSubjectReviewRoutes } from './routes/self-subject-reviews.js';
import { AccessAdvisor } from './auth/access.js';
import { WatchHub } from './watch/watch-hub.js';
import type { WatchLimits } from './watch/watch-limits.js';
import { defaultRequestTimeoutMs, requestTimeouts } from './request-timeouts.js';
import { pathNotFound } from '../api/errors.js';
import { endpointAuthorizer } from './auth/endpoint-auth.js';
import { registerRequestGate } from './auth/request-gate.js';
import { AnonymousBodies, type AnonymousBodyLimits } from './auth/anonymous-bodies.js';
import { canonicalUrl } from './canonical-path.js';
import { callerOf } from './yaml-thread.js';
import { registerResponseConventions } from './response-conventions.js';
import { registerMetrics, ServerMetrics } from './metrics.js';
import type { Registry as MetricsRegistry } from 'prom-client';
import { lazyChildLogger } from './request-logger.js';
import { registerSignInRoutes } from './routes/signin.js';
import { CallbackLimit } from '../signin/callback-limit.js';
import { DeviceSignIn, defaultMaxWaitingDeviceSignIns, defaultMaxWaitingPerClient } from '../signin/device.js';
import { budgetScopes } from './client-address.js';
import { registerLeakReportRoutes, type LeakReportOptions } from './routes/leak-reports.js';
import type { Notifier } from '../notify/notifier.js';
import type { Supervisor } from '../background/supervisor.js';
import type { KeyHealthSweep } from './key-health-sweep.js';
import type { AccessRequestExpiry } from './access-request-expiry.js';
import { serverBackground, type BackgroundOptions } from './background/server-background.js';
import type { Leader } from './background/leader.js';
import { TokenExchange, type TokenExchangeOptions } from '../federation/exchange.js';
import { registerTokenRoute } from './routes/token.js';

/** kubeconfig server URLs end with this; kubectl asks for <prefix>/apis and so on. */
export { apiPrefix } from '../api/resources.js';
import { apiPrefix } from '../api/resources.js';
import { packageVersion as readPackageVersion } from '../package-files.js';

const packageVersion = readPackageVersion();

/** The server's options; those of its background controllers are in server-background.ts. */
export interface ServerOptions extends BackgroundOptions {
  https?: { key: Buffer; cert: Buffer };
  bookmarkIntervalMs?: number;
  /** Time a client has to send its whole request, headers and body (default 60 s). */
  requestTimeoutMs?: number;
  /** Watches open at once per access key, per user and in total, and how long each lasts (watch-limits.ts). */
  watchLimits?: Partial<WatchLimits>;
  /** More Prometheus registries /metrics serves after the server's own (the sidecar's reconcile metrics). */
  moreMetrics?: MetricsRegistry[];
  /** The token exchange of CI job tokens (src/federation): the CA its issuers are trusted with, the clock. */
  federation?: TokenExchangeOptions;
  /** POST /auth/revoke and GitHub's secret scanning alerts (routes/leak-reports.ts). */
  leakReports?: LeakReportOptions;
  /** Bodies read from clients without a key at once, per address and in bytes for the server (auth/anonymous-bodies.ts). */
  anonymousBodies?: AnonymousBodyLimits;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The key health sweep, when the server runs one (tests run a sweep at a time they choose). */
    keyHealthSweep?: KeyHealthSweep;
    /** Records Active AccessRequests past their time as Expired (tests sweep at a time they choose). */
    accessRequestExpiry: AccessRequestExpiry;
    /** The notifier, when the server sends notifications (tests run a pass after moving their clock). */
    notifier?: Notifier;
    /** The supervisor of the background controllers (their states: tests, and whoever debugs a close). */
    background: Supervisor;
    /** Who runs the leader's work, and its fence (the sidecar's writes carry it: serve-run.ts). */
    leader: Leader;
  }
}

export async function buildServer(opts: ServerOptions): Promise<FastifyInstance> {
  const { registry } = opts;
  const timeouts = requestTimeouts(opts.requestTimeoutMs ?? defaultRequestTimeoutMs);
  const { requestTimeout } = timeouts;
  const app = Fastify({
    loggerInstance: opts.logger,
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: lazyChildLogger,
    bodyLimit: maxBodyBytes,
    // Names may be 253 characters long.
    routerOptions: { maxParamLength: 1024 },
    return503OnClosing: true,
    requestTimeout,
    clientErrorHandler: handleClientError,
    // Errors fastify meets before routing (a malformed URL) are Status bodies like all others.
    frameworkErrors: (err, req, reply) => handleError(err, req, reply),
    // One spelling of the path routes the request and decides who may send it (canonical-path.ts).
    rewriteUrl: (req) => canonicalUrl(req),
    ...(opts.https ? { https: { ...opts.https, ...timeouts } } : { http: timeouts }),
  }) as unknown as FastifyInstance;

  // Bodies are decoded by the routes, which know which media types each verb accepts.
  app.removeAllContentTypeParsers();
  const metrics = new ServerMetrics();
  const anonymousBodies = new AnonymousBodies(opts.anonymousBodies, (bound) => metrics.anonymousBodyRefusals.inc({ bound }));
  metrics.watchAnonymousBodies(() => anonymousBodies.receiving());
  // Read only after the gate (request-gate.ts, before-body.ts) let the request through. YAML is
  // decoded here already, in a worker thread (yaml-thread.ts), for parseBody to pick up, on the
  // routes that take YAML only (route config `yamlBody`): never for sign-in or an unknown path.
  app.addContentTypeParser('*', { parseAs: 'buffer' }, async (req: FastifyRequest, body: Buffer) => {
    // Received: a body sent without a key no longer counts against the bound on those (anonymous-bodies.ts).
    anonymousBodies.received(req);
    if ((req.routeOptions.config as { yamlBody?: boolean } | undefined)?.yamlBody) await preDecodeBody(req.headers['content-type'], body, callerOf(req));
    return body;
  });
  app.setErrorHandler(handleError);
  // Before compression registers its own onSend: the newline is added to the body it compresses.
  registerResponseConventions(app);
  // As kube-apiserver: gzip, and only responses of 128 KiB or more (smaller ones gain too little for
  // the CPU). Request bodies are never decompressed (kube takes none compressed). Watches write to
  // the raw socket after hijacking the reply, so they stream uncompressed, as kube's do.
  await app.register(compress, { globalCompression: true, globalDecompression: false, encodings: ['gzip'], threshold: 128 * 1024 });
  app.decorateRequest('identity', undefined);
  // Every request needs a key but those on the gate's explicit anonymous list (request-gate.ts).
  registerRequestGate(app, opts.auth, { signIn: opts.signIn !== undefined, anonymousBodies });
  app.setNotFoundHandler((_req, reply) => {
    void reply.code(404).type('application/json').send(JSON.stringify(pathNotFound().toStatus()));
  });

  const group = registry.teams.info.group;
  const models = Object.values(servedModels(group));
  const hub = new WatchHub(opts.auth, opts.watchLimits, opts.bookmarkIntervalMs);
  registerHealthRoutes(app, registry.store, packageVersion);
  registerDiscoveryRoutes(app, apiPrefix, models, packageVersion);
  registerListedKindRoutes(app, apiPrefix, group, registry.store, hub);
  registerResourceRoutes(app, `${apiPrefix}/apis/${group}/v1`, registry, hub, opts.auth);
  if (opts.audit) registerAuditRoutes(app, apiPrefix, opts.audit);
  registerSelfSubjectReviewRoutes(app, apiPrefix, new AccessAdvisor(opts.auth.authorizer, registry));
  registerLeakReportRoutes(app, registry, { ...(opts.auth.now ? { now: opts.auth.now } : {}), ...opts.leakReports });
  const authorizeEndpoint = endpointAuthorizer(opts.auth);
  registerMetrics(app, metrics, (req, reply) => authorizeEndpoint(req, reply, 'metrics'), opts.moreMetrics);

  const exchange = new TokenExchange(registry, opts.auth, opts.federation);
  registerTokenRoute(app, exchange, opts.signIn);
  if (opts.signIn) registerSignInRoutes(app, opts.signIn, new DeviceSignIn(opts.signIn, defaultMaxWaitingDeviceSignIns, defaultMaxWaitingPerClient, budgetScopes), new CallbackLimit({ scopes: budgetScopes }));

  // The routes are the server's; what runs beside them is the supervisor's, from ready to close.
  const background = serverBackground(opts, metrics, exchange);
  if (background.keyHealthSweep) app.decorate('keyHealthSweep', background.keyHealthSweep);
  app.decorate('accessRequestExpiry', background.accessRequestExpiry);
  if (background.notifier) app.decorate('notifier', background.notifier);
  app.decorate('background', background.supervisor);
  app.decorate('leader', background.leader);
  app.addHook('onReady', async () => {
    await background.supervisor.start();
  });
  // A response finished while closing tells its client not to reuse the connection (see shutdown.ts).
  let closing = false;
  app.addHook('onSend', (_req, reply, payload, done) => {
    if (closing) void reply.header('Connection', 'close');
    done(null, payload);
  });
  app.addHook('preClose', async () => {
    closing = true;
    await background.supervisor.stop();
    opts.auth.teams.stop();
    hub.endAll();
  });
  return app;
}
