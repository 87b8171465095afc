/**
 * No escalation (auth/escalation.ts): no identity gains what the writer does not hold. A status
 * write of a key is judged too (a later lastActivity keeps a key alive longer), never as setting it.
 */
import type { Team } from '../../api/types.js';
import { asKey, keyEscalation, teamEscalation } from '../../auth/escalation.js';
import { nowOf, type AdmissionPlugin } from './chain.js';

export const escalationPlugin: AdmissionPlugin = {
  name: 'escalation',
  admit: ({ who, resource, subresource, old, object, setsKey }, ctx) => {
    // AccessRequests grant nothing by being written; their approval is judged in access-requests.ts.
    if (!object || resource === 'accessrequests') return undefined;
    if (resource === 'teams') return subresource === 'status' ? undefined : teamEscalation(who, ctx.authorizer, ctx.teams, old as Team | undefined, object as Team);
    const status = subresource === 'status';
    if (status && !old) return undefined;
    return keyEscalation(who, ctx.authorizer, ctx.teams, asKey(old), asKey(object)!, { setsKey: !status && setsKey === true, now: nowOf(ctx) });
  },
};
