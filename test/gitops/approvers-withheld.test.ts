/**
 * On a pull request (pull-request mode, live values withheld) the approvals section named every
 * member of a live team the pull request does not describe: a change to Team payments needs an
 * approval from the users of its live `spec.owner.team` (security-leads), and the comment listed
 * them. The access change withholds exactly such names (gitops.md); now the approvals section does
 * too, counting them, and names the approvers the manifests name (found by a review).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/types.js';
import { approvePlan } from '../../src/gitops/approvals/plan-approvals.js';
import type { Reconciled } from '../../src/gitops/reconcile.js';
import { renderMarkdown } from '../../src/gitops/report/markdown.js';
import { buildReport } from '../../src/gitops/report/report.js';
import type { Plan } from '../../src/gitops/plan/plan.js';
import { startReviewsStandIn, type ReviewsStandIn } from './github-reviews-standin.js';

const team = (name: string, spec: Record<string, unknown>): KubeObject => ({ apiVersion: 'management.service/v1', kind: 'Team', metadata: { name }, spec });

describe('approvals in pull-request mode', () => {
  let github: ReviewsStandIn;
  beforeAll(async () => {
    github = await startReviewsStandIn();
    github.pulls.set('acme/teams#7', { author: 'mallory', headSha: 'abc', reviews: [] });
  });
  afterAll(() => github.close());

  it('names no member of a team the pull request does not describe', async () => {
    // The pull request's manifest: payments, owned by the security-leads team (named, not described).
    const desired = team('payments', { owner: { team: 'security-leads' }, users: ['ana', 'mallory'] });
    const live = {
      teams: [team('payments', { owner: { team: 'security-leads' }, users: ['ana'] }), team('security-leads', { users: ['sam-secret', 'tess-secret'] })],
      ownedaccesskeys: [],
      federatedcredentials: [],
    };
    const plan: Plan = { sourceId: 'ci', actions: [{ kind: 'Team', plural: 'teams', name: 'payments', type: 'update', changes: [{ path: 'spec.users', before: ['ana'], after: ['ana', 'mallory'], drift: false }], drift: false }] };
    const report = buildReport({ mode: 'plan', source: { id: 'ci', description: 'gitops' }, target: 'https://teamkeys', errors: [], plan });
    const r = { report, plan, desired: [{ plural: 'teams', obj: desired, manifest: {} }], live, withheld: true, loaded: {} } as unknown as Reconciled;
    await approvePlan(r, { owner: 'acme', repo: 'teams', number: 7 }, { url: github.url, token: github.token });
    const markdown = renderMarkdown(r.report);
    expect(markdown).toContain('approval missing');
    expect(markdown).not.toMatch(/sam-secret|tess-secret/);
    expect(JSON.stringify(r.report)).not.toMatch(/sam-secret|tess-secret/);
    expect(r.report.approvals?.missing).toEqual(['team "payments" (update Team/payments): needs an approval from one of 2 of its owners or approvers not named in this pull request']);
  });

  it('names approvers the manifests name, and every approver outside pull-request mode', async () => {
    const desired = team('payments', { owner: { team: 'security-leads' }, users: ['ana', 'mallory', 'sam-secret'] });
    const live = { teams: [team('payments', { owner: { team: 'security-leads' }, users: ['ana'] }), team('security-leads', { users: ['sam-secret', 'tess-secret'] })], ownedaccesskeys: [], federatedcredentials: [] };
    const plan: Plan = { sourceId: 'ci', actions: [{ kind: 'Team', plural: 'teams', name: 'payments', type: 'update', changes: [], drift: false }] };
    const run = async (withheld: boolean) => {
      const r = { report: buildReport({ mode: 'plan', source: { id: 'ci', description: 'gitops' }, target: 'https://teamkeys', errors: [], plan }), plan, desired: [{ plural: 'teams', obj: desired, manifest: {} }], live, ...(withheld ? { withheld: true } : {}), loaded: {} } as unknown as Reconciled;
      await approvePlan(r, { owner: 'acme', repo: 'teams', number: 7 }, { url: github.url, token: github.token });
      return r.report.approvals?.missing;
    };
    expect(await run(true)).toEqual(['team "payments" (update Team/payments): needs an approval from one of @sam-secret, or 1 of its owners or approvers not named in this pull request']);
    expect(await run(false)).toEqual(['team "payments" (update Team/payments): needs an approval from one of @sam-secret, @tess-secret']);
  });
});
