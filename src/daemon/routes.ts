/** The daemon's HTTP endpoints: health, readiness, Prometheus metrics, the latest report, and the webhook. */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SyncDaemon } from './daemon.js';
import type { DaemonMetrics } from './metrics.js';
import { bearerValid, DeliveryLog, signatureValid } from './webhook.js';

export interface DaemonRouteOptions {
  /**
   * GitHub webhook secret; when set, POST /sync must carry a valid X-Hub-Signature-256 (a delivery
   * is acted on once), and GET /sync/report the secret as a bearer token (without the API's authorize).
   */
  webhookSecret?: string;
  /** Also serve /healthz and /readyz (not when the API server already does). */
  health: boolean;
  /** Serve /metrics (default true; the API server serves the sidecar's with its own). */
  metrics?: boolean;
  /**
   * On the API listener: authenticates the request's key and throws 401/403 unless it may read
   * metrics or the report, or trigger a sync (POST /sync without a valid webhook signature).
   */
  authorize?: (req: FastifyRequest, reply: FastifyReply, action: 'metrics' | 'report' | 'sync') => Promise<void>;
  /** Served by /metrics instead of the daemon's own registry (the server's, merged with sign-in's). */
  metricsRegistry?: DaemonMetrics['registry'];
}

/** A loopback peer: the same host (IPv4 127/8, IPv6 ::1, or 127/8 mapped into IPv6). */
const isLoopback = (address: string | undefined) => address !== undefined && (address === '::1' || /^(::ffff:)?127\./.test(address));

export function registerDaemonRoutes(app: FastifyInstance, daemon: SyncDaemon, metrics: DaemonMetrics, opts: DaemonRouteOptions): void {
  const status = (code: number, reason: string, message: string) => ({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code, reason, message });
  const deliveries = new DeliveryLog();
  /**
   * The report names objects, drift and who made it, and keys: behind the API's authorization in the
   * sidecar, the webhook secret (as a bearer token) in teamkeys watch, and, with neither, served
   * to loopback peers only (a --listen 0.0.0.0 without a secret must not publish it).
   */
  const reportRefusal = (req: FastifyRequest): { code: number; reason: string; message: string } | undefined => {
    if (opts.webhookSecret !== undefined) {
      return bearerValid(opts.webhookSecret, req.headers.authorization) ? undefined : { code: 401, reason: 'Unauthorized', message: 'the report needs the webhook secret as a bearer token (Authorization: Bearer ...)' };
    }
    if (isLoopback(req.socket.remoteAddress)) return undefined;
    return { code: 403, reason: 'Forbidden', message: 'without --webhook-secret-file the report is served to loopback clients only: set a webhook secret and send it as a bearer token' };
  };
  if (opts.health) {
    app.get('/healthz', (_req, reply) => reply.type('text/plain').send('ok'));
    app.get('/livez', (_req, reply) => reply.type('text/plain').send('ok'));
    app.get('/readyz', (_req, reply) =>
      daemon.ready ? reply.type('text/plain').send('ok') : reply.code(503).type('text/plain').send(`not ready: ${daemon.lastError ?? 'no successful sync yet'}`),
    );
  }
  if (opts.metrics !== false) {
    app.get('/metrics', async (req, reply) => {
      await opts.authorize?.(req, reply, 'metrics');
      const registry = opts.metricsRegistry ?? metrics.registry;
      return reply.type(registry.contentType).send(await registry.metrics());
    });
  }
  app.get('/sync/report', async (req, reply) => {
    if (opts.authorize) await opts.authorize(req, reply, 'report');
    else {
      const refused = reportRefusal(req);
      if (refused) return reply.code(refused.code).type('application/json').send(status(refused.code, refused.reason, refused.message));
    }
    return daemon.lastReport ? reply.type('application/json').send(JSON.stringify(daemon.lastReport)) : reply.code(404).send(status(404, 'NotFound', 'no sync has completed yet'));
  });
  /** A caller judged by a management admin's key instead of a signature: it sent none, or there is no secret to check one. */
  const byKey = (req: FastifyRequest) => opts.authorize !== undefined && (req.headers['x-hub-signature-256'] === undefined || !opts.webhookSecret);
  const unsigned = () => status(401, 'Unauthorized', 'missing or invalid X-Hub-Signature-256');
  app.post('/sync', {
    // What the headers decide is decided before the body is read (a review found up to 3 MiB read
    // before a 401 or 403): the key of a caller without a signature, a missing signature.
    onRequest: async (req, reply) => {
      if (byKey(req)) await opts.authorize!(req, reply, 'sync');
      else if (opts.webhookSecret && req.headers['x-hub-signature-256'] === undefined) return reply.code(401).type('application/json').send(unsigned());
    },
  }, async (req, reply) => {
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const signature = req.headers['x-hub-signature-256'] as string | undefined;
    const signed = opts.webhookSecret !== undefined && signatureValid(opts.webhookSecret, body, signature);
    // Without a valid signature, the API listener asked for a management admin's key instead (above).
    if (!signed && !byKey(req) && opts.webhookSecret) return reply.code(401).type('application/json').send(unsigned());
    if (signed) {
      const delivery = req.headers['x-github-delivery'];
      const replay = deliveries.replayed(typeof delivery === 'string' ? delivery : undefined, signature!);
      if (replay) return reply.code(409).type('application/json').send(status(409, 'AlreadyExists', `${replay}: a replayed delivery is not acted on`));
    }
    if (req.headers['x-github-event'] === 'ping') return reply.code(200).type('application/json').send({ ok: true });
    daemon.trigger('webhook');
    return reply.code(202).type('application/json').send({ accepted: true });
  });
}
