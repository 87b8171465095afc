/**
 * GitHub's secret scanning partner endpoint (POST /auth/secret-scanning/github): GitHub (or a
 * GitHub Enterprise custom pattern's webhook) posts a JSON list of `{token, type, url, source}`
 * signed with `Github-Public-Key-Identifier` / `Github-Public-Key-Signature`; every token that is a
 * key is disabled as POST /auth/revoke disables it, and the answer is GitHub's feedback list,
 * `{token_raw, token_type, label}` with `true_positive` or `false_positive`. A request whose
 * signature does not verify is 401 and changes nothing; such failures spend the client address's
 * budget, as failed authentications do.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, badRequest, serviceUnavailable, tooManyRequests } from '../../api/errors.js';
import { scopeWords, type FailureLimiter } from '../../auth/failure-limit.js';
import type { Registry } from '../../registry/registry.js';
import type { GitHubKeys } from '../leaks/github-keys.js';
import { verifiesBody } from '../leaks/github-keys.js';
import { recordedSourceUrl, reportLeakedKey } from '../leaks/leaked-keys.js';
import { budgetScopes, clientOf } from '../client-address.js';
import { ConcurrentLimit } from '../../auth/concurrent-limit.js';
import { whenGone } from '../connection-gone.js';

export const gitHubScanningPath = '/auth/secret-scanning/github';
/** The audit event's user of a report GitHub made. */
export const gitHubReporter = 'system:github-secret-scanning';
/** Tokens one alert may carry: GitHub batches, but never this many. */
const maxTokens = 1000;

interface Match {
  token: string;
  type: string;
  url?: unknown;
}

function matchesOf(body: Buffer): Match[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    throw badRequest('the body must be a JSON list of {token, type, url, source}');
  }
  if (!Array.isArray(parsed)) throw badRequest('the body must be a JSON list of {token, type, url, source}');
  if (parsed.length > maxTokens) throw badRequest(`at most ${maxTokens} tokens per request`);
  return parsed.map((m: unknown, i) => {
    const o = m as Record<string, unknown> | null;
    if (!o || typeof o !== 'object' || typeof o.token !== 'string') throw badRequest(`entry ${i}: token must be a string`);
    return { token: o.token, type: typeof o.type === 'string' ? o.type : '', url: o.url };
  });
}

async function verified(req: FastifyRequest, keys: GitHubKeys): Promise<boolean> {
  const id = req.headers['github-public-key-identifier'];
  const signature = req.headers['github-public-key-signature'];
  if (typeof id !== 'string' || typeof signature !== 'string' || !Buffer.isBuffer(req.body)) return false;
  const key = await keys.keyFor(id).catch((err: unknown) => {
    req.log.warn({ err }, "GitHub's secret scanning keys cannot be fetched");
    throw serviceUnavailable("GitHub's secret scanning keys cannot be fetched; try again", 60);
  });
  return key !== undefined && verifiesBody(key, req.body, signature);
}

/** An alert's largest body: GitHub sends at most maxTokens matches, each a token and a URL. */
export const alertBodyLimit = 1024 * 1024;
/** Alerts of one client address whose bodies are read at once, before their signature is checked (GitHub retries a 429). */
const maxAlertsReading = 2;

export function registerGitHubScanningRoute(app: FastifyInstance, registry: Registry, keys: GitHubKeys, budget: FailureLimiter, now: () => Date): void {
  const unsigned = () => new ApiError(401, 'Unauthorized', 'the alert is not signed by a key GitHub publishes for secret scanning');
  // Bodies read before their signature is checked: at most this many at once per client address,
  // each at most alertBodyLimit. The budget is charged only once a body failed to verify, so
  // requests sent together all passed it: a review had one address make the server hold 24 bodies
  // of 2.5 MB. Per address, not for the whole server: a cap for all let one address hold every
  // place with bodies it never sent, and GitHub's alerts were refused (found by the next review).
  // Per address and, for IPv6, its /64 and /48: a host picks any of its /64's addresses.
  const reading = new ConcurrentLimit(maxAlertsReading, budgetScopes);
  // A place comes back when its alert has been handled; when the request is gone before its handler
  // began (a body never finished), then. Not at the cut alone: a handler still holds the body while
  // it waits for GitHub's keys (found by a review: six cut alerts of one address verified at once).
  const places = new WeakMap<object, { handling: boolean; giveBack: () => void }>();
  app.post(gitHubScanningPath, {
    bodyLimit: alertBodyLimit,
    // What the headers decide is decided before the body is read: an address past its budget, an
    // alert without GitHub's signature headers (a review found up to 3 MiB read first), too many
    // alerts being read at once.
    onRequest: async (req, reply) => {
      const client = clientOf(req);
      const wait = budget.retryAfter(client);
      if (wait !== undefined) throw tooManyRequests('too many unverified secret scanning alerts from this address; try again later', wait);
      if (typeof req.headers['github-public-key-identifier'] !== 'string' || typeof req.headers['github-public-key-signature'] !== 'string') {
        budget.fail(client);
        throw unsigned();
      }
      const full = reading.full(client);
      if (full) throw tooManyRequests(`too many secret scanning alerts from ${scopeWords(full)} are being read at once; try again`, 1);
      const place = { handling: false, giveBack: reading.take(client) };
      places.set(req.raw, place);
      whenGone(req.raw, reply.raw, () => {
        if (!place.handling) place.giveBack();
      });
    },
  }, async (req, reply) => {
    const place = places.get(req.raw);
    if (place) place.handling = true;
    try {
      return await handle(req, reply);
    } finally {
      place?.giveBack();
    }
  });

  async function handle(req: FastifyRequest, reply: FastifyReply) {
    const address = clientOf(req);
    if (!(await verified(req, keys))) {
      budget.fail(address);
      throw unsigned();
    }
    const feedback = [];
    for (const m of matchesOf(req.body as Buffer)) {
      const sourceUrl = recordedSourceUrl(m.url, m.token);
      // One entry whose key cannot be disabled does not stop the batch's others (a review found a
      // key with full annotations stopped every alert it was in, GitHub's retries included).
      const { known, disabled, refused } = await reportLeakedKey(registry, m.token, { address, via: 'github-secret-scanning', username: gitHubReporter, ...(sourceUrl ? { sourceUrl } : {}) }, now());
      if (refused) req.log.error({ err: refused, via: 'github-secret-scanning' }, 'a reported key could not be disabled');
      if (disabled) req.log.warn({ keyName: disabled, via: 'github-secret-scanning', ...(sourceUrl ? { sourceUrl } : {}) }, `disabled access key "${disabled}": reported leaked`);
      feedback.push({ token_raw: m.token, token_type: m.type, label: known ? 'true_positive' : 'false_positive' });
    }
    req.log.info({ tokens: feedback.length, truePositives: feedback.filter((f) => f.label === 'true_positive').length }, 'GitHub secret scanning alert handled');
    return reply.code(200).header('Cache-Control', 'no-store').type('application/json').send(JSON.stringify(feedback));
  }
}
