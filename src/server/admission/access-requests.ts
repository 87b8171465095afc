/**
 * AccessRequests (api/access-request.ts): a new request names a team that exists, a duration the
 * team allows and roles the team has, and is break-glass only where the Team allows it and for whom
 * it names; an approval is judged as adding a member to the team is (auth/escalation.ts): its
 * approver must hold what the membership confers.
 */
import { bindingOf, durationRefusal, madeOf, owesReview } from '../../api/access-request.js';
import { invalid } from '../../api/errors.js';
import type { AccessRequest } from '../../api/types.js';
import { grantsAnything, lacking, membershipGrants, type Atom } from '../../auth/grants.js';
import { mayNameFor, mayRead } from '../../auth/escalation.js';
import { standingOf, standingRefusal } from '../../auth/temporary-access.js';
import type { AdmissionPlugin } from './chain.js';

export const accessRequestsPlugin: AdmissionPlugin = {
  name: 'access-requests',
  admit: ({ who, verb, resource, subresource, old, object }, ctx) => {
    if (resource !== 'accessrequests') return undefined;
    // Deleting would erase the record that a review is owed; reviewed, a request may go.
    if (verb === 'delete' && old && owesReview(old as AccessRequest)) return `break-glass request "${old.metadata.name}" owes a review by an approver of team "${(old as AccessRequest).spec.team}" and cannot be deleted before it`;
    if (!object) return undefined;
    const req = object as AccessRequest;
    const team = ctx.teams.get(req.spec.team);
    const gk = { group: ctx.authorizer.group, kind: 'AccessRequest' };
    if (verb === 'create') {
      // Asking names the team, so whether it exists is answered (as a name taken is), and what a
      // request must fit (its maxDuration, the roles it grants) is told: the asker needs it. Whether
      // the team has break-glass users at all is not the asker's unless it may read the team: it is
      // refused alike (found by a review: the wording told a caller with no right to read it).
      const reads = mayRead(who, ctx.authorizer, ctx.teams, req.spec.team);
      if (!grantsAnything(team)) return invalid(gk, req.metadata.name ?? '', [{ type: 'Invalid', field: 'spec.team', value: req.spec.team, detail: 'no such team' }]);
      if (req.spec.breakGlass) {
        const allowed = team.spec?.accessRequests?.breakGlass?.users;
        const onlyNamed = `break-glass access to team "${req.spec.team}" is only for the users its spec.accessRequests.breakGlass.users names, each asking for themselves`;
        if (!allowed && !reads) return onlyNamed;
        if (!allowed) return invalid(gk, req.metadata.name ?? '', [{ type: 'Forbidden', field: 'spec.breakGlass', detail: `team "${req.spec.team}" does not allow break-glass requests (spec.accessRequests.breakGlass)` }]);
        // Active without approval, so only for whom the Team names, each for themselves: no one hands it out.
        if (who.user === undefined || req.spec.user !== who.user || !allowed.includes(who.user)) return onlyNamed;
      }
      const tooLong = durationRefusal(req, team);
      if (tooLong) return invalid(gk, req.metadata.name ?? '', [{ type: 'Invalid', field: 'spec.duration', value: req.spec.duration ?? '', detail: tooLong }]);
      const teamRoles = new Set((team.spec?.clusterRoles ?? []).map((r) => r.name));
      const foreign = (req.spec.roles ?? []).filter((r) => !teamRoles.has(r));
      if (foreign.length > 0) return invalid(gk, req.metadata.name ?? '', [{ type: 'Invalid', field: 'spec.roles', value: foreign, detail: `team "${req.spec.team}" does not grant these roles` }]);
      return undefined;
    }
    if (subresource !== 'approval') return undefined;
    if (req.spec.user !== undefined && req.spec.user === who.user) return 'a request may not be approved by its own requester';
    // The approval of a break-glass request is its review: it grants nothing (it is active already).
    if (req.spec.breakGlass) return undefined;
    // Asked of a team deleted since whose name another now holds: an approval would grant nothing
    // (temporary-access.ts), so it is refused, saying why; a denial still closes the request.
    if (req.status?.phase !== 'Denied' && team && !madeOf(bindingOf(req), team)) return `request "${req.metadata.name}" was asked of an earlier team "${req.spec.team}", deleted since: it grants nothing on the team of that name now; ask again`;
    // A denial grants nothing: any approver may deny, a temporary one too.
    if (req.status?.phase === 'Denied') return undefined;
    // An approver only through temporary access (a member for an hour of the team that owns this one)
    // would hand out access outliving its own: approving takes standing approver rights.
    const standing = standingOf(who);
    if (!ctx.authorizer.allowed(standing, 'update', 'accessrequests', req, 'approval')) return standingRefusal(who, `approving requests for team "${req.spec.team}" needs standing rights to approve them`);
    // The approval adds a member for a while, and is judged as adding one is (auth/escalation.ts
    // teamEscalation): the approver must hold what membership confers (the team's roles, and
    // ownership of and access to other teams naming it), or the roles of the subset. Judged by the
    // approver's standing rights: the access approved outlives a temporary one of its own. A
    // refusal names only what the approver may read (the team asked of, teams it may get), as
    // every escalation refusal does: a review found it named a team the approver gets 403 on.
    const atoms: Atom[] = req.spec.roles ? [...new Set(req.spec.roles)].sort().map((role) => ({ kind: 'role', role })) : membershipGrants(req.spec.team, ctx.teams, ctx.authorizer);
    const missing = lacking(standing, atoms, ctx.teams, ctx.authorizer, true, mayNameFor(standing, ctx.authorizer, ctx.teams, req.spec.team));
    return standingRefusal(who, missing ? `approving this request would grant ${missing}, which you do not hold` : undefined);
  },
};
