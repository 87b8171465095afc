/**
 * The API server's Prometheus metrics at /metrics: prom-client's default process and Node.js
 * metrics (CPU, memory, heap, event-loop lag, handles, GC) and the latency of every request by
 * verb, resource and code, as kube-apiserver's `apiserver_request_duration_seconds` (with its
 * buckets). Labels are low-cardinality only: a verb of a fixed set, a served resource or "", an
 * HTTP status; never an object name, a user or a path, so a client cannot grow the series.
 * The sidecar's own registry (reconcile metrics) is served from the same endpoint.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { servedPlurals } from '../api/resources.js';

/** kube-apiserver's buckets for apiserver_request_duration_seconds. */
const kubeBuckets = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];

const resources = new Set<string>(servedPlurals);

/** kube's verb for a request: LIST and WATCH for collection reads, DELETECOLLECTION for a collection delete. */
export function requestVerb(method: string, collection: boolean, watch: boolean): string {
  if (method === 'GET' || method === 'HEAD') return watch ? 'WATCH' : collection ? 'LIST' : 'GET';
  if (method === 'DELETE' && collection) return 'DELETECOLLECTION';
  return ['POST', 'PUT', 'PATCH', 'DELETE'].includes(method) ? method : 'OTHER';
}

/**
 * prom-client's process and Node.js metrics, collected once per process: they describe the process,
 * not a server, and each collection installs a GC observer and an event-loop delay monitor that
 * nothing removes, so one per server would add both again for every server a process builds (a
 * test's in-process servers, hundreds in one test worker).
 */
let processMetrics: Registry | undefined;
function processRegistry(): Registry {
  if (processMetrics === undefined) {
    processMetrics = new Registry();
    collectDefaultMetrics({ register: processMetrics });
  }
  return processMetrics;
}

export class ServerMetrics {
  /** The process's metrics, shared by every server of the process; served before the server's own. */
  readonly process = processRegistry();
  readonly registry = new Registry();
  readonly requestDuration = new Histogram({
    name: 'teamkeys_apiserver_request_duration_seconds',
    help: 'Response latency of API requests in seconds, by verb, resource and HTTP code (as kube-apiserver\'s apiserver_request_duration_seconds; WATCH lasts as long as the watch).',
    labelNames: ['verb', 'resource', 'code'],
    buckets: kubeBuckets,
    registers: [this.registry],
  });

  /**
   * Key health, set by the periodic sweep (key-health-sweep.ts), never on a request: counts only,
   * by window (`within`: 1d, 7d, 30d, cumulative) and whether the keys are Login keys (sessions
   * from sign-in expire routinely; an alert usually wants the others).
   */
  readonly keysExpiring = new Gauge({
    name: 'teamkeys_access_keys_expiring',
    help: 'Access keys that are neither disabled nor expired and expire within the window `within` (1d, 7d, 30d; each window counts the shorter ones too), by login="true" for keys from sign-in.',
    labelNames: ['within', 'login'],
    registers: [this.registry],
  });
  readonly keysExpired = new Gauge({
    name: 'teamkeys_access_keys_expired',
    help: 'Access keys that have expired (they are refused) and are not yet removed (see --expired-key-retention), by login.',
    labelNames: ['login'],
    registers: [this.registry],
  });
  readonly keysAutoDisabled = new Counter({
    name: 'teamkeys_access_keys_auto_disabled_total',
    help: 'Access keys this server disabled for being unused longer than --disable-unused-after.',
    registers: [this.registry],
  });
  readonly keyHealthSweep = new Gauge({
    name: 'teamkeys_key_health_last_sweep_timestamp_seconds',
    help: 'When the key health sweep that set the teamkeys_access_keys_* gauges last finished (Unix time); an alert on its age finds a sweep that stopped.',
    registers: [this.registry],
  });

  /**
   * Bodies sent without a key (auth/anonymous-bodies.ts): bytes being received, by pool, read at
   * each scrape; and refusals, by the bound that refused (`address`, or the pool's server bound).
   * An attack on the key-less endpoints shows as a full pool and a rising count.
   */
  readonly anonymousBodyRefusals = new Counter({
    name: 'teamkeys_anonymous_bodies_refused_total',
    help: 'Requests without a key refused (429) before their body was read or cut while it arrived, by the bound that refused them: address (its address or network sends as many as it may), forms or webhooks (the server holds as many bytes of those as it may).',
    labelNames: ['bound'],
    registers: [this.registry],
  });

  /** Reads `receiving` (bytes by pool) at each scrape. */
  watchAnonymousBodies(receiving: () => Readonly<Record<string, number>>): void {
    new Gauge({
      name: 'teamkeys_anonymous_body_bytes',
      help: 'Bytes of request bodies from clients without a key being received now, as arrived so far, by pool (forms: revocations, token exchanges, sign-in; webhooks: GitHub alerts, the sidecar), against --max-anonymous-body-bytes each.',
      labelNames: ['pool'],
      registers: [this.registry],
      collect() {
        for (const [pool, bytes] of Object.entries(receiving())) this.set({ pool }, bytes);
      },
    });
  }

  /** Records a finished request: its route says the resource and whether it named a collection. */
  observe(req: FastifyRequest, reply: FastifyReply): void {
    const params = (req.params ?? {}) as { resource?: string; name?: string };
    const resource = params.resource !== undefined && resources.has(params.resource) ? params.resource : '';
    const query = (req.query ?? {}) as { watch?: string };
    const watch = query.watch === 'true' || query.watch === '1';
    const verb = requestVerb(req.method, resource !== '' && params.name === undefined, watch);
    this.requestDuration.observe({ verb, resource, code: String(reply.statusCode) }, reply.elapsedTime / 1000);
  }
}

/**
 * Times every request and serves /metrics (the process's metrics, this server's, then `more`, the sidecar's),
 * after `authorize` lets the caller read metrics.
 */
export function registerMetrics(app: FastifyInstance, metrics: ServerMetrics, authorize: (req: FastifyRequest, reply: FastifyReply) => Promise<void>, more: Registry[] = []): void {
  // Callback-style hooks: an async one costs every request a promise and a microtask turn.
  app.addHook('onResponse', (req, reply, done) => {
    metrics.observe(req, reply);
    done();
  });
  app.get('/metrics', async (req, reply) => {
    await authorize(req, reply);
    const texts = await Promise.all([metrics.process, metrics.registry, ...more].map((r) => r.metrics()));
    return reply.type(metrics.registry.contentType).send(texts.join('\n'));
  });
}
