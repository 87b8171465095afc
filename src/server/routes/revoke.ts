/**
 * POST /auth/revoke: token revocation after RFC 7009, for whoever finds a key. No credential but
 * the key itself: the body is `application/x-www-form-urlencoded` with `token=<value>` (and
 * optionally `token_type_hint`, ignored, and `source_url`, where the value was found). The answer
 * is 200 with the same body whether or not the string was a key (RFC 7009 section 2.2), so the
 * endpoint tells a stranger nothing about which strings are keys. Each client address has a budget
 * of reports (a token bucket, as the failed-authentication budget), then 429.
 */
import type { FastifyInstance } from 'fastify';
import { badRequest, tooManyRequests } from '../../api/errors.js';
import type { FailureLimiter } from '../../auth/failure-limit.js';
import type { Registry } from '../../registry/registry.js';
import { recordedSourceUrl, reportLeakedKey } from '../leaks/leaked-keys.js';
import { clientOf } from '../client-address.js';

export const revokePath = '/auth/revoke';
/** The one answer every well-formed report gets. */
export const revokeAnswer = '{}';
/** The audit event's user of a revocation: anyone. */
export const anonymousReporter = 'system:anonymous';
/** Reports a client address may send at once, and how many per second the budget regains. */
export const defaultRevokeLimit = { burst: 20, perSecond: 0.5 };

function formOf(body: unknown, contentType: string | undefined): URLSearchParams {
  if (!/^application\/x-www-form-urlencoded\s*(;|$)/i.test(contentType ?? '')) throw badRequest('the body must be application/x-www-form-urlencoded with token=<the key> (RFC 7009)');
  return new URLSearchParams(Buffer.isBuffer(body) ? body.toString('utf8') : '');
}

export function registerRevokeRoute(app: FastifyInstance, registry: Registry, budget: FailureLimiter, now: () => Date): void {
  app.post(revokePath, {
    // The budget is spent and checked before the body is read: an address past it is answered at
    // once, not after the server took its form (a review found it waited for the whole body first).
    onRequest: async (req) => {
      const address = clientOf(req);
      const wait = budget.retryAfter(address);
      if (wait !== undefined) throw tooManyRequests('too many revocations from this address; try again later', wait);
      budget.fail(address);
    },
  }, async (req, reply) => {
    const address = clientOf(req);
    const form = formOf(req.body, req.headers['content-type']);
    const token = form.get('token');
    if (!token) throw badRequest('the form must carry token=<the key> (RFC 7009)');
    const sourceUrl = recordedSourceUrl(form.get('source_url'), token);
    const { disabled, refused } = await reportLeakedKey(registry, token, { address, via: 'revoke', username: anonymousReporter, ...(sourceUrl ? { sourceUrl } : {}) }, now());
    // RFC 7009's answer is the same for every string: a refusal of the disabling write (which
    // names the key) is the operator's to see, not the reporter's.
    if (refused) req.log.error({ err: refused, reporter: address, via: 'revoke' }, 'a reported key could not be disabled');
    if (disabled) req.log.warn({ keyName: disabled, reporter: address, via: 'revoke', ...(sourceUrl ? { sourceUrl } : {}) }, `disabled access key "${disabled}": reported leaked`);
    return reply.code(200).header('Cache-Control', 'no-store').type('application/json').send(revokeAnswer);
  });
}
