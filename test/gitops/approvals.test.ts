/**
 * Approvals from the Teams themselves: a plan made for a pull request (`plan --pull-request`) reads
 * its reviews from a GitHub stand-in and says which team's approval is missing; the author's own
 * approval, a dismissed one and one of an older commit do not count; `apply --plan` of the saved
 * plan asks again and refuses (exit 1, nothing written) while the approval is missing.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Report } from '../../src/gitops/report/report.js';
import type { SavedPlan } from '../../src/gitops/saved/saved-plan.js';
import { root, teamkeysAsync } from '../support/cli.js';
import { kubectl, startServe, type Served } from '../server/serve-process.js';
import { newRepo, type Repo } from './git-repo.js';
import { startReviewsStandIn, type ReviewsStandIn, type StandInReview } from './github-reviews-standin.js';

const payments = (users: string[]) => `apiVersion: management.service/v1
kind: Team
metadata:
  name: payments
  annotations:
    gitops.management.service/approvers: "@carol"
spec:
  owner: {user: alice}
  users: [${users.join(', ')}]
`;
const platform = `apiVersion: management.service/v1
kind: Team
metadata: {name: platform}
spec:
  owner: {user: dora}
`;

const ajv = new Ajv({ allErrors: true, strict: false });
(addFormatsModule as unknown as (a: Ajv) => Ajv)(ajv);
const validReport = ajv.compile(JSON.parse(readFileSync(join(root, 'schemas/report.schema.json'), 'utf8')) as object);

/** The pull request's head: the commit planned (set once it is made). */
let head = '';
const older = 'c0ffee0000000000000000000000000000000000';
const review = (login: string, state: StandInReview['state'], commit = head): StandInReview => ({ user: { login }, state, commit_id: commit });

describe('approvals from the Teams: plan --pull-request, apply --plan', () => {
  let served: Served;
  let github: ReviewsStandIn;
  let repo: Repo;
  let work: string;
  const target = () => ['--server', served.url, '--token-file', join(served.dir, 'admin.key'), '--ca-file', join(served.dir, 'tls/cert.pem')];
  /** The built CLI, asynchronously: the stand-in in this process must answer meanwhile. */
  const run = (args: string[]) => teamkeysAsync(args, { env: { GITHUB_API_URL: github.url, GITHUB_TOKEN: github.token } });
  const source = () => ['--source', repo.dir, '--ref', 'main', '--source-id', 'approvals'];
  const plan = (file: string) => run(['plan', ...source(), ...target(), '--pull-request', 'acme/teams#7', '--out', join(work, file), '--report-dir', join(work, `report-${file}`)]);
  const apply = (file: string) => run(['apply', '--plan', join(work, file), ...target(), '--report-dir', join(work, `applied-${file}`)]);
  const report = (dir: string) => JSON.parse(readFileSync(join(work, dir, 'report.json'), 'utf8')) as Report;
  const users = () => kubectl(served, ['get', 'team', 'payments', '-o', 'jsonpath={.spec.users}']).stdout;
  const setReviews = (...reviews: StandInReview[]) => github.pulls.set('acme/teams#7', { author: 'alice', headSha: head, reviews });

  beforeAll(async () => {
    [served, github, repo] = await Promise.all([startServe(), startReviewsStandIn(), newRepo({ withExamples: false })]);
    work = mkdtempSync(join(tmpdir(), 'teamkeys-approvals-'));
    repo.write('teams/payments.yaml', payments(['ana']));
    repo.write('teams/platform.yaml', platform);
    await repo.commit('teams');
    const first = await run(['apply', ...source(), ...target()]);
    expect(first.code, first.stderr).toBe(0);
    // The pull request: alice (payments' owner) adds bob to payments; platform is unchanged.
    repo.write('teams/payments.yaml', payments(['ana', 'bob']));
    head = await repo.commit('add bob to payments');
  });
  afterAll(async () => {
    await Promise.all([served.stop(), github.close()]);
    repo.cleanup();
    rmSync(work, { recursive: true, force: true });
  });

  it("a change to team payments with no approval is reported missing its owners' approval", async () => {
    setReviews();
    const r = await plan('none.json');
    expect(r.code, r.stderr).toBe(0);
    // The author is alice, the owner: only the other approver, carol, can approve.
    expect(r.stdout).toContain('approval missing: team "payments" (update Team/payments): needs an approval from one of @carol');
    expect(validReport(report('report-none.json')), JSON.stringify(validReport.errors)).toBe(true);
    expect(report('report-none.json').approvals).toMatchObject({ pullRequest: 'acme/teams#7', author: 'alice', teams: [{ team: 'payments', approvers: ['alice', 'carol'], approvedBy: [] }] });
    expect(readFileSync(join(work, 'report-none.json', 'report.md'), 'utf8')).toContain('**approval missing**');
    expect(github.requests.every((q) => q.endsWith(`Bearer ${github.token}`))).toBe(true);
  });

  it("the author's own approval, a dismissed review and an approval of an older commit do not count", async () => {
    setReviews(review('alice', 'APPROVED'), review('carol', 'APPROVED'), review('carol', 'DISMISSED'), review('erin', 'APPROVED'));
    const dismissed = await plan('dismissed.json');
    expect(dismissed.stdout).toContain('approval missing: team "payments"');
    setReviews(review('carol', 'APPROVED', older));
    expect((await plan('stale.json')).stdout).toContain('approval missing: team "payments"');
    // A change requested after an approval withdraws it; a comment after it does not.
    setReviews(review('carol', 'APPROVED'), review('carol', 'CHANGES_REQUESTED'));
    expect((await plan('withdrawn.json')).stdout).toContain('approval missing: team "payments"');
  });

  it('apply of the saved plan asks again and refuses while the approval is missing', async () => {
    setReviews(review('alice', 'APPROVED'));
    const r = await apply('none.json');
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('refused: approval missing on pull request acme/teams#7: team "payments" (update Team/payments): needs an approval from one of @carol');
    expect(report('applied-none.json').outcome).toBe('refused');
    expect(validReport(report('applied-none.json')), JSON.stringify(validReport.errors)).toBe(true);
    expect(users()).toBe('["ana"]');
    const saved = JSON.parse(readFileSync(join(work, 'none.json'), 'utf8')) as SavedPlan;
    expect(saved.approvals).toEqual({ pullRequest: { owner: 'acme', repo: 'teams', number: 7 }, requirements: [{ team: 'payments', approvers: ['alice', 'carol'], changes: ['update Team/payments'] }], headSha: head });
    expect(head).toMatch(/^[0-9a-f]{40}$/);
  });

  it('approvals of a later head do not apply a plan made at an earlier one: refused, plan again', async () => {
    const later = 'facade0000000000000000000000000000000002';
    github.pulls.set('acme/teams#7', { author: 'alice', headSha: later, reviews: [review('carol', 'APPROVED', later)] });
    try {
      const r = await apply('none.json');
      expect(r.code).toBe(1);
      expect(r.stdout).toContain(`refused: the approvals of pull request acme/teams#7 are of its head, not of this plan: the plan was made of commit ${head.slice(0, 12)}, and its head is now facade000000. Plan the head again. Nothing was written`);
      expect(users()).toBe('["ana"]');
    } finally {
      setReviews();
    }
  });

  it("with the owner's approval the plan passes and its saved plan applies", async () => {
    setReviews(review('carol', 'APPROVED'), review('carol', 'COMMENTED'));
    const r = await plan('approved.json');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('team "payments": approved by @carol');
    expect(r.stdout).not.toContain('approval missing');
    const applied = await apply('approved.json');
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    expect(users()).toBe('["ana","bob"]');
    expect(report('applied-approved.json').approvals?.missing).toEqual([]);
  });
});
