/**
 * Whose approval a key or a FederatedCredential needs: the holder it acts for. A rule was grouped by
 * its own name as if it were a team (one named like a team its author owns passed with that team's
 * approval, whatever team its keys act for), and a key or rule of a user or a subject by none, so
 * it needed no approval at all (found by a review). Pure: requirements and their check.
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/types.js';
import { checkApprovals } from '../../src/gitops/approvals/check.js';
import { approvalRequirements } from '../../src/gitops/approvals/requirements.js';
import type { PlanStep } from '../../src/gitops/plan/plan.js';

const v = 'management.service/v1';
const step = (kind: string, plural: PlanStep['plural'], name: string, type: PlanStep['type'] = 'create'): PlanStep => ({ kind, plural, name, type, changes: [], drift: false });
const team = (name: string, owner: string, approvers?: string): KubeObject => ({ apiVersion: v, kind: 'Team', metadata: { name, ...(approvers ? { annotations: { 'gitops.management.service/approvers': approvers } } : {}) }, spec: { owner: { user: owner } } });
const rule = (name: string, holder: Record<string, string>): KubeObject => ({ apiVersion: v, kind: 'FederatedCredential', metadata: { name }, spec: { issuer: 'https://token.actions.githubusercontent.com', audiences: ['teamkeys'], claims: { repository: 'mallory/*' }, ...holder } });
const key = (name: string, holder: Record<string, string>): KubeObject => ({ apiVersion: v, kind: 'OwnedAccessKey', metadata: { name }, spec: holder });
const live = { teams: [team('prod-admins', 'cto', 'security-lead'), team('sandbox', 'mallory', 'mallory-friend')], ownedaccesskeys: [] as KubeObject[], federatedcredentials: [] as KubeObject[] };
const pr = { owner: 'acme', repo: 'teams', number: 7 };

describe('approvals of keys and FederatedCredentials: the holder they act for', () => {
  it("a FederatedCredential needs its team's approval, not that of a team named like it", () => {
    const reqs = approvalRequirements([step('FederatedCredential', 'federatedcredentials', 'sandbox')], [rule('sandbox', { team: 'prod-admins' })], live);
    expect(reqs).toEqual([{ team: 'prod-admins', approvers: ['cto', 'security-lead'], changes: ['create FederatedCredential/sandbox'] }]);
    const checked = checkApprovals(pr, { author: 'mallory', headSha: 'h', approvedBy: ['mallory-friend'] }, reqs);
    expect(checked.missing).toEqual(['team "prod-admins" (create FederatedCredential/sandbox): needs an approval from one of @cto, @security-lead']);
  });

  it('a FederatedCredential moved to another team needs both; a new team in the same pull request does not stand for another', () => {
    const moved = { ...live, federatedcredentials: [rule('deploy', { team: 'sandbox' })] };
    const reqs = approvalRequirements([step('FederatedCredential', 'federatedcredentials', 'deploy', 'update')], [rule('deploy', { team: 'prod-admins' })], moved);
    expect(reqs.map((r) => r.team)).toEqual(['prod-admins', 'sandbox']);
    const withNewTeam = approvalRequirements([step('Team', 'teams', 'x'), step('FederatedCredential', 'federatedcredentials', 'x')], [team('x', 'mallory-alt'), rule('x', { team: 'prod-admins' })], live);
    expect(withNewTeam).toEqual([
      { team: 'prod-admins', approvers: ['cto', 'security-lead'], changes: ['create FederatedCredential/x'] },
      { team: 'x', approvers: ['mallory-alt'], changes: ['create Team/x'] },
    ]);
  });

  it("a key or rule of a user needs that user's review, never the author's own", () => {
    const reqs = approvalRequirements([step('OwnedAccessKey', 'ownedaccesskeys', 'cto-key'), step('FederatedCredential', 'federatedcredentials', 'cto-rule')], [key('cto-key', { user: 'CTO' }), rule('cto-rule', { user: 'CTO' })], live);
    expect(reqs).toEqual([{ team: 'CTO', holder: 'user', approvers: ['cto'], changes: ['create OwnedAccessKey/cto-key', 'create FederatedCredential/cto-rule'] }]);
    expect(checkApprovals(pr, { author: 'mallory', headSha: 'h', approvedBy: ['security-lead'] }, reqs).missing).toEqual([
      'user "CTO" (create OwnedAccessKey/cto-key, create FederatedCredential/cto-rule): needs an approval from @cto, the user it acts for',
    ]);
    expect(checkApprovals(pr, { author: 'mallory', headSha: 'h', approvedBy: ['cto'] }, reqs).missing).toEqual([]);
    // A login that names the user is not the user where sign-in is not GitHub's: its own pull request does not approve.
    expect(checkApprovals(pr, { author: 'cto', headSha: 'h', approvedBy: ['cto'] }, reqs).missing).toEqual([
      'user "CTO" (create OwnedAccessKey/cto-key, create FederatedCredential/cto-rule): needs an approval from the user it acts for, who is the author: a key of one\'s own is made with teamkeys login or kubectl, not by a pull request of one\'s own',
    ]);
  });

  it("a subject's key going away needs no approval; moved to a team, that team's", () => {
    const withBot = { ...live, ownedaccesskeys: [key('bot', { subject: 'ci-bot' })] };
    expect(approvalRequirements([step('OwnedAccessKey', 'ownedaccesskeys', 'bot', 'delete')], [], withBot)).toEqual([]);
    expect(approvalRequirements([step('OwnedAccessKey', 'ownedaccesskeys', 'bot', 'update')], [key('bot', { team: 'sandbox' })], withBot)).toEqual([
      { team: 'sandbox', approvers: ['mallory', 'mallory-friend'], changes: ['update OwnedAccessKey/bot'] },
    ]);
  });

  it('a key of a subject cannot be approved: a team key can', () => {
    const reqs = approvalRequirements([step('OwnedAccessKey', 'ownedaccesskeys', 'bot')], [key('bot', { subject: 'ci-bot' })], live);
    expect(reqs).toEqual([{ team: 'ci-bot', holder: 'subject', approvers: [], changes: ['create OwnedAccessKey/bot'] }]);
    expect(checkApprovals(pr, { author: 'mallory', headSha: 'h', approvedBy: ['cto'] }, reqs).missing).toEqual([
      `subject "ci-bot" (create OwnedAccessKey/bot): a key or rule acting for a subject has no owner to approve it; make it a team's (spec.team) to have it approved`,
    ]);
  });
});
