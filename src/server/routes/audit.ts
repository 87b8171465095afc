/**
 * GET <prefix>/apis/audit.management.service/v1/events: the audit trail, read-only, for
 * management admins only (who may change anything may see who changed what). Filters narrow it to
 * one object (resource, name, uid), a user, or a start time.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { auditApiVersion, auditGroup, maxAuditLimit, type AuditFilter } from '../../api/audit-event.js';
import { ApiError, badRequest, methodNotAllowed } from '../../api/errors.js';
import type { AuditRecorder } from '../audit/audit-recorder.js';
import type { Resource } from '../../auth/roles.js';
import { scopeDenial } from '../../auth/scope.js';
import { identityOf } from '../auth/guard.js';

type Query = Record<string, string | string[] | undefined>;

function filterOf(q: Query): AuditFilter {
  const one = (k: string) => {
    const v = q[k];
    if (Array.isArray(v)) throw badRequest(`query parameter ${k} may be given once`);
    return v || undefined;
  };
  const f: AuditFilter = {};
  for (const k of ['resource', 'name', 'uid', 'username', 'since'] as const) {
    const v = one(k);
    if (v) f[k] = v;
  }
  if (f.since && Number.isNaN(Date.parse(f.since))) throw badRequest(`since must be an RFC 3339 time, not "${f.since}"`);
  if (f.since) f.since = new Date(f.since).toISOString();
  const limit = one('limit');
  if (limit !== undefined) {
    if (!/^\d+$/.test(limit) || Number(limit) < 1 || Number(limit) > maxAuditLimit) throw badRequest(`limit must be a whole number from 1 to ${maxAuditLimit}, not "${limit}"`);
    f.limit = Number(limit);
  }
  return f;
}

/** Serves the audit trail's read-only list to management admins. */
export function registerAuditRoutes(app: FastifyInstance, apiPrefix: string, audit: AuditRecorder): void {
  const url = `${apiPrefix}/apis/${auditApiVersion}/events`;
  app.route({
    method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
    url,
    // Judged before the body is read: a key that may not read the trail, or a write, costs no body
    // (a review found a 3 MiB body read from any key holder before the 403).
    onRequest: async (req: FastifyRequest) => {
      const who = identityOf(req);
      const forbidden = (why: string) => new ApiError(403, 'Forbidden', `events.${auditGroup} is forbidden: User "${who.name}" cannot list resource "events" in API group "${auditGroup}": ${why}`);
      if (!who.clusterRoles.has('management-admin')) throw forbidden('only management admins may read the audit trail');
      // An admin's key scoped to less (say, to teams) does not reach the trail either.
      const scoped = scopeDenial(who.scope, { verb: 'list', group: auditGroup, resource: 'events' as Resource });
      if (scoped) throw forbidden(scoped);
      // The trail is append-only: nobody edits or deletes what it recorded.
      if (req.method !== 'GET') throw methodNotAllowed(req.method, 'the audit trail (it is read-only)');
    },
    handler: async (req: FastifyRequest<{ Querystring: Query }>, reply) => {
      const items = await audit.list(filterOf(req.query));
      return reply.code(200).type('application/json').send(JSON.stringify({ kind: 'EventList', apiVersion: auditApiVersion, metadata: {}, items }));
    },
  });
}
