/**
 * Authentication of a request by its bearer key (with the per-client failure budget), and the
 * authorization of the endpoints outside the resource API that the sidecar mounts on the API
 * listener: /metrics, /sync/report and POST /sync. Health endpoints and /version stay open.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, tooManyRequests } from '../../api/errors.js';
import { servedPlurals } from '../../api/resources.js';
import type { ActivityRecorder } from '../../auth/activity.js';
import type { Identity } from '../../auth/identity.js';
import { roleVerbs, type Resource, type Verb } from '../../auth/roles.js';
import { scopeDenial } from '../../auth/scope.js';
import type { AuthContext } from './guard.js';

/** Authenticates the request's bearer key and records the identity on it; throws 401 / 429 / 503. */
export async function authenticateRequest(req: FastifyRequest, reply: FastifyReply, auth: AuthContext): Promise<Identity> {
  const { authenticator, failures } = auth;
  // Behind a proxy every client shares the proxy's address; the limit then applies to all alike.
  const client = req.socket.remoteAddress ?? '';
  const wait = failures?.retryAfter(client);
  if (wait !== undefined && !authenticator.recentlyValid(req.headers.authorization)) {
    throw tooManyRequests(`too many failed authentication attempts from this client; retry after ${wait} seconds`, wait);
  }
  // Reserved before the lookup, which may wait for the store: guesses in flight together share one budget.
  const taken = failures?.reserve(client) ?? 0;
  let failed = false;
  try {
    req.identity = await authenticator.authenticate(req.headers.authorization);
    return req.identity;
  } catch (err) {
    if (err instanceof ApiError && err.code === 401) {
      failed = true;
      void reply.header('WWW-Authenticate', 'Bearer realm="teamkeys"');
    }
    throw err;
  } finally {
    failures?.settle(client, taken, failed);
  }
}

/** What a request to a sidecar endpoint asks for. */
export type EndpointAction = 'metrics' | 'report' | 'sync';

/**
 * Who may do each, as roles on the whole API (the key's scope must allow the same):
 * - metrics: get on every team or every access key (teams-viewer, teams-admin, accesskeys-admin,
 *   management-admin), as kube's /metrics needs a user allowed to read it;
 * - report (field diffs and who made them, of both kinds): get on every team and every access key;
 * - sync (run a reconcile now, outside a signed webhook): management-admin.
 */
const needs: Record<EndpointAction, { verb: Verb; resources: Resource[]; any: boolean }[]> = {
  metrics: [{ verb: 'get', resources: [...servedPlurals], any: true }],
  report: [{ verb: 'get', resources: [...servedPlurals], any: false }],
  sync: [{ verb: 'update', resources: [...servedPlurals], any: false }],
};

function permitted(who: Identity, action: EndpointAction, group: string): boolean {
  if (action === 'sync' && !who.clusterRoles.has('management-admin')) return false;
  return needs[action].every(({ verb, resources, any }) => {
    const ok = (resource: Resource) => roleVerbs(who.clusterRoles, resource).has(verb) && !scopeDenial(who.scope, { verb, group, resource });
    return any ? resources.some(ok) : resources.every(ok);
  });
}

/** The check the sidecar's routes run: authenticates, then 403 unless the key may do `action`. */
export function endpointAuthorizer(auth: AuthContext & { activity?: ActivityRecorder }) {
  return async (req: FastifyRequest, reply: FastifyReply, action: EndpointAction): Promise<void> => {
    const who = await authenticateRequest(req, reply, auth);
    if (permitted(who, action, auth.authorizer.group)) return;
    const path = req.url.split('?')[0];
    throw new ApiError(403, 'Forbidden', `forbidden: User "${who.name}" cannot ${req.method.toLowerCase()} path "${path}"`);
  };
}
