/**
 * Authentication of a request by its bearer key (with the per-client failure budget), and the
 * check of the endpoints outside the resource API that the sidecar mounts on the API listener:
 * /metrics, /sync/report and POST /sync, decided by authorize() (auth/non-resource.ts says who may).
 * Health endpoints and /version stay open.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, tooManyRequests } from '../../api/errors.js';
import type { ActivityRecorder } from '../../auth/activity.js';
import type { Identity } from '../../auth/identity.js';
import { allows, authorize } from '../../auth/decision.js';
import { endpointPaths, type EndpointAction } from '../../auth/non-resource.js';
import type { AuthContext } from './guard.js';
import { impersonate } from '../../auth/impersonation.js';
import { impersonationAsked } from './impersonate-headers.js';
import { warningHeader } from '../reply.js';
import { clientOf } from '../client-address.js';

/** Authenticates the request's bearer key and records the identity on it; throws 401 / 429 / 503. */
export async function authenticateRequest(req: FastifyRequest, reply: FastifyReply, auth: AuthContext): Promise<Identity> {
  // The gate (request-gate.ts) authenticated it already: once per request, one unit of budget.
  if (req.identity) return req.identity;
  const { authenticator, failures } = auth;
  // Behind a proxy every client shares the proxy's address; the limit then applies to all alike.
  const client = clientOf(req);
  const wait = failures?.retryAfter(client);
  if (wait !== undefined && !authenticator.recentlyValid(req.headers.authorization)) {
    throw tooManyRequests(`too many failed authentication attempts from this client; retry after ${wait} seconds`, wait);
  }
  // Reserved before the lookup, which may wait for the store: guesses in flight together share one budget.
  const taken = failures?.reserve(client) ?? [];
  let failed = false;
  let who: Identity;
  try {
    who = await authenticator.authenticate(req.headers.authorization);
  } catch (err) {
    if (err instanceof ApiError && err.code === 401) {
      failed = true;
      void reply.header('WWW-Authenticate', 'Bearer realm="teamkeys"');
    }
    throw err;
  } finally {
    failures?.settle(client, taken, failed);
  }
  warnBreakGlass(reply, who);
  // Authenticated: now, before anything is authorized, whom it acts as (kube's impersonation filter).
  const asked = impersonationAsked(req.raw);
  req.identity = asked ? impersonate(who, asked, auth.authorizer, auth.teams) : who;
  return req.identity;
}

/**
 * Break-glass is loud: every request authenticated with access it confers says so in a Warning
 * header (kubectl prints it), whatever the request does, until the access ends. send() and the
 * watch stream keep it beside their own warnings.
 */
function warnBreakGlass(reply: FastifyReply, who: Identity): void {
  const used = (who.temporary ?? []).filter((g) => g.breakGlass);
  if (used.length === 0) return;
  const warnings = used.map((g) => `break-glass access to team "${g.team}" (AccessRequest ${g.request}) until ${new Date(g.expiresAt).toISOString()}: this request is recorded and owes a review`);
  void reply.header('Warning', warningHeader(warnings));
}

/** The check the sidecar's routes run: authenticates, then 403 unless the key may do `action`. */
export function endpointAuthorizer(auth: AuthContext & { activity?: ActivityRecorder }) {
  return async (req: FastifyRequest, reply: FastifyReply, action: EndpointAction): Promise<void> => {
    const who = await authenticateRequest(req, reply, auth);
    // Asked as the endpoint's own path and verb: the route, not the URL's spelling, says which it is.
    if (allows(authorize(auth.authorizer, { user: who, ...endpointPaths[action] }))) return;
    const path = req.url.split('?')[0];
    throw new ApiError(403, 'Forbidden', `forbidden: User "${who.name}" cannot ${req.method.toLowerCase()} path "${path}"`);
  };
}
