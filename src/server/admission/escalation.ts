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
  // (temporary-access.ts), and a refusal says so. Synchronous unless a key's user's requests are read.
  admit: (a, ctx) => {
    const refusal = judged(a, ctx);
    return refusal instanceof Promise ? refusal.then((r) => standingRefusal(a.who, r)) : standingRefusal(a.who, refusal);
  },
};

type Reach = { grants: Awaited<ReturnType<AdmissionContext['temporaryGrants']>> };

/**
 * Whether the key's user's temporary access is read: when the writer is not that user acting as
 * itself (an accesskeys-admin, an impersonator, a rule's writer), the key carries it to whoever
 * holds it.
 */
const readsReach = (who: AdmissionRequest['who'], user: string | undefined): user is string => user !== undefined && (user !== who.user || who.impersonation !== undefined);

/** `judge` without the key user's temporary access, or with it once read. */
function withReach(needed: boolean, user: string | undefined, ctx: AdmissionContext, judge: (reach?: Reach) => string | undefined): string | undefined | Promise<string | undefined> {
  if (!needed || user === undefined) return judge();
  return ctx.temporaryGrants(user).then((grants) => judge({ grants }));
}

function judged({ who, resource, subresource, old, object, setsKey }: AdmissionRequest, ctx: AdmissionContext): string | undefined | Promise<string | undefined> {
  // AccessRequests grant nothing by being written; their approval is judged in access-requests.ts.
  if (!object || resource === 'accessrequests') return undefined;
  if (resource === 'teams') return subresource === 'status' ? undefined : teamEscalation(standingOf(who), ctx.authorizer, ctx.teams, old as Team | undefined, object as Team);
  const status = subresource === 'status';
  if (resource === 'federatedcredentials') {
    if (status) return undefined;
    const key = keyJudgedForRule(object as FederatedCredential);
    return withReach(readsReach(who, key.spec.user), key.spec.user, ctx, (reach) => {
      const refusal = keyEscalation(who, ctx.authorizer, ctx.teams, undefined, key, { setsKey: true, now: nowOf(ctx), ...(reach ? { reach } : {}) });
      return refusal && `a FederatedCredential mints keys for its team or user with its scope, so writing one needs the rights to create such a key: ${refusal}`;
    });
  }
  if (status && !old) return undefined;
  // keyEscalation judges what a widened key gains by the standing rights itself (auth/escalation.ts).
  const key = asKey(object)!;
  const opts = { setsKey: !status && setsKey === true, now: nowOf(ctx) };
  // Read only for a write that widens the key: a label or a narrowing hands nothing on.
  const needed = readsReach(who, key.spec.user) && widens(asKey(old), key, opts.setsKey, opts.now);
  return withReach(needed, key.spec.user, ctx, (reach) => keyEscalation(who, ctx.authorizer, ctx.teams, asKey(old), key, { ...opts, ...(reach ? { reach } : {}) }));
}
