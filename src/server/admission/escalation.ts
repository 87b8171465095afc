/**
 * No escalation (auth/escalation.ts): no identity gains what the writer does not hold. A status
 * write of a key is judged too (a later lastActivity keeps a key alive longer), never as setting it.
 * A FederatedCredential is judged as the key it mints, created anew at every write of its spec: a
 * changed rule (another claim, a wider audience) hands the key to other jobs, so it is a new grant.
 */
import { keyJudgedForRule } from '../../api/federated-key.js';
import type { FederatedCredential, Team } from '../../api/types.js';
import { asKey, keyEscalation, teamEscalation, widens } from '../../auth/escalation.js';
import { standingOf, standingRefusal } from '../../auth/temporary-access.js';
import { nowOf, type AdmissionContext, type AdmissionPlugin, type AdmissionRequest } from './chain.js';

export const escalationPlugin: AdmissionPlugin = {
  name: 'escalation',
  // What a write grants outlives the request: the writer's temporary access does not count
  // (temporary-access.ts), and a refusal says so.
  admit: async (a, ctx) => standingRefusal(a.who, await judged(a, ctx)),
};

/**
 * The temporary access of the key's user, read when the writer is not that user acting as itself
 * (an accesskeys-admin, an impersonator, a rule's writer): the key carries it to whoever holds it.
 */
async function reachFor(who: AdmissionRequest['who'], user: string | undefined, ctx: AdmissionContext): Promise<{ grants: Awaited<ReturnType<AdmissionContext['temporaryGrants']>> } | undefined> {
  if (user === undefined || (user === who.user && !who.impersonation)) return undefined;
  return { grants: await ctx.temporaryGrants(user) };
}

async function judged({ who, resource, subresource, old, object, setsKey }: AdmissionRequest, ctx: AdmissionContext): Promise<string | undefined> {
  // AccessRequests grant nothing by being written; their approval is judged in access-requests.ts.
  if (!object || resource === 'accessrequests') return undefined;
  if (resource === 'teams') return subresource === 'status' ? undefined : teamEscalation(standingOf(who), ctx.authorizer, ctx.teams, old as Team | undefined, object as Team);
  const status = subresource === 'status';
  if (resource === 'federatedcredentials') {
    if (status) return undefined;
    const key = keyJudgedForRule(object as FederatedCredential);
    const reach = await reachFor(who, key.spec.user, ctx);
    const refusal = keyEscalation(who, ctx.authorizer, ctx.teams, undefined, key, { setsKey: true, now: nowOf(ctx), ...(reach ? { reach } : {}) });
    return refusal && `a FederatedCredential mints keys for its team or user with its scope, so writing one needs the rights to create such a key: ${refusal}`;
  }
  if (status && !old) return undefined;
  // keyEscalation judges what a widened key gains by the standing rights itself (auth/escalation.ts).
  const key = asKey(object)!;
  const opts = { setsKey: !status && setsKey === true, now: nowOf(ctx) };
  // Read only for a write that widens the key: a label or a narrowing hands nothing on.
  const reach = widens(asKey(old), key, opts.setsKey, opts.now) ? await reachFor(who, key.spec.user, ctx) : undefined;
  return keyEscalation(who, ctx.authorizer, ctx.teams, asKey(old), key, { ...opts, ...(reach ? { reach } : {}) });
}
