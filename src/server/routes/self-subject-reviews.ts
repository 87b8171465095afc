/**
 * kubectl's own questions about access: `kubectl auth whoami` (SelfSubjectReview),
 * `kubectl auth can-i VERB RESOURCE [NAME]` (SelfSubjectAccessReview) and `kubectl auth can-i
 * --list` (SelfSubjectRulesReview). Each answers for the key that sends it, from AccessAdvisor.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { badRequest, methodNotAllowed } from '../../api/errors.js';
import { isJsonMap } from '../../api/types.js';
import type { Identity } from '../../auth/identity.js';
import { nonResourceRules } from '../../auth/non-resource.js';
import { selfSubjectReviewGroups, type AccessAdvisor } from '../auth/access.js';
import { bodyTypeOf, mediaType, objectBodies, parseBody } from '../content.js';
import { decodeSelfSubjectReview, protobufMediaType } from '../self-subject-review-protobuf.js';
import { identityOf } from '../auth/guard.js';
import { send } from '../reply.js';

type Request = FastifyRequest<{ Body: Buffer | undefined }>;

/** The review a client posted: an object of the expected kind, or a 400 saying what was sent. */
function review(req: Request, kind: string): Record<string, unknown> & { spec?: Record<string, unknown> } {
  const body =
    mediaType(req.headers['content-type']) === protobufMediaType
      ? decodeSelfSubjectReview(req.body)
      : parseBody(req.body, bodyTypeOf(req.headers['content-type'], objectBodies));
  if (!isJsonMap(body)) throw badRequest(`the request body must be a ${kind} object`);
  if (body.kind !== undefined && body.kind !== kind) throw badRequest(`the request body must be a ${kind}, not ${JSON.stringify(body.kind)}`);
  if (body.spec !== undefined && !isJsonMap(body.spec)) throw badRequest(`spec of a ${kind} must be an object`);
  return body as ReturnType<typeof review>;
}

/** The reply to a review: the request echoed, with status filled in, created as kube answers. */
function answer(group: string, kind: string, body: Record<string, unknown>, status: object) {
  return { ...body, kind, apiVersion: `${group}/v1`, metadata: { creationTimestamp: null }, status };
}

/** Who the key acts for, in kube's UserInfo shape; the key and its teams go in `extra`. */
export function userInfo(who: Identity, group: string): object {
  const extra: Record<string, string[]> = { [`${group}/access-key`]: [who.keyName] };
  if (who.teams.length > 0) extra[`${group}/teams`] = [...who.teams];
  if (who.clusterRoles.size > 0) extra[`${group}/roles`] = [...who.clusterRoles].sort();
  if (who.scope && Object.keys(who.scope).length > 0) extra[`${group}/scope`] = [JSON.stringify(who.scope)];
  if (who.job) extra[`${group}/job`] = [who.job];
  return { username: who.name, groups: [...who.groups, 'system:authenticated'], extra };
}

const text = (v: unknown) => (typeof v === 'string' ? v : '');

export function registerSelfSubjectReviewRoutes(app: FastifyInstance, prefix: string, advisor: AccessAdvisor): void {
  const post = (url: string, handler: (req: Request) => Promise<object> | object) =>
    app.route<{ Body: Buffer | undefined }>({
      method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
      url,
      config: { yamlBody: true },
      // Reviews are only ever created, as in kube: nothing is stored, nothing to read back. Refused
      // before the body is read or decoded (a review found up to 3 MiB read, and YAML decoded, first).
      onRequest: async (req) => {
        if (req.method !== 'POST') throw methodNotAllowed(req.method, url.split('/').pop()!);
      },
      handler: async (req, reply) => send(req, reply, 201, await handler(req)),
    });
  const authn = `${prefix}/apis/${selfSubjectReviewGroups.authentication}/v1`;
  const authz = `${prefix}/apis/${selfSubjectReviewGroups.authorization}/v1`;

  post(`${authn}/selfsubjectreviews`, (req) => {
    const body = review(req, 'SelfSubjectReview');
    return answer(selfSubjectReviewGroups.authentication, 'SelfSubjectReview', body, { userInfo: userInfo(identityOf(req), advisor.group) });
  });

  post(`${authz}/selfsubjectaccessreviews`, async (req) => {
    const body = review(req, 'SelfSubjectAccessReview');
    const attrs = body.spec?.resourceAttributes;
    if (!isJsonMap(attrs)) {
      // Non-resource URLs: discovery, and the endpoints the sidecar mounts (auth/non-resource.ts).
      const url = isJsonMap(body.spec?.nonResourceAttributes) ? text(body.spec.nonResourceAttributes.path) : '';
      if (!url) throw badRequest('spec.resourceAttributes or spec.nonResourceAttributes is required');
      const { allowed } = advisor.decidePath(identityOf(req), text((body.spec!.nonResourceAttributes as Record<string, unknown>).verb), url);
      return answer(selfSubjectReviewGroups.authorization, 'SelfSubjectAccessReview', body, { allowed });
    }
    const verb = text(attrs.verb);
    const resource = text(attrs.resource);
    if (!verb || !resource) throw badRequest('spec.resourceAttributes.verb and spec.resourceAttributes.resource are required');
    const name = text(attrs.name);
    const subresource = text(attrs.subresource);
    const decision = await advisor.decide(identityOf(req), {
      verb,
      resource,
      group: text(attrs.group),
      ...(name ? { name } : {}),
      ...(subresource ? { subresource } : {}),
    });
    return answer(selfSubjectReviewGroups.authorization, 'SelfSubjectAccessReview', body, { allowed: decision.allowed, ...(decision.reason ? { reason: decision.reason } : {}) });
  });

  post(`${authz}/selfsubjectrulesreviews`, async (req) => {
    const body = review(req, 'SelfSubjectRulesReview');
    const { rules, incomplete } = await advisor.rules(identityOf(req));
    return answer(selfSubjectReviewGroups.authorization, 'SelfSubjectRulesReview', body, {
      resourceRules: rules,
      nonResourceRules: nonResourceRules(advisor.group, identityOf(req)),
      incomplete,
      ...(incomplete ? { evaluationError: 'only the first objects of each kind were reviewed; ask kubectl auth can-i about a named object' } : {}),
    });
  });
}
