/**
 * The job summary was written whole, however long the report. GitHub refuses a step summary over
 * 1 MiB ("$GITHUB_STEP_SUMMARY upload aborted, supports content up to a size of 1024k") and drops it
 * entirely, while the comment, cut at 65,536 characters, tells reviewers the whole report is in the
 * job summary: a pull request (which decides the report's length) decided whether the rest of its
 * report was shown anywhere (found by a review). Now the summary is cut at a line, saying where the
 * whole report is.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actionRunner, pullRequestPayload, type ActionRunner } from '../support/action-runner.js';
import { newRepo, type Repo } from '../gitops/git-repo.js';

const githubSummaryLimit = 1024 * 1024;

describe('the job summary of a long report', () => {
  let repo: Repo;
  let runner: ActionRunner;

  beforeAll(async () => {
    repo = await newRepo({ withExamples: false });
    // One file, 9,000 documents, each an error line in the report: about 1.6 MB of Markdown.
    repo.write('gitops/many.yaml', Array.from({ length: 9000 }, (_, i) => `---\napiVersion: management.service/v1\nkind: Nope${i}\n`).join(''));
    await repo.commit('pull request');
    runner = actionRunner();
  });
  afterAll(() => {
    repo.cleanup();
    runner.cleanup();
  });

  it('stays within what GitHub keeps (1 MiB), saying where the rest is', async () => {
    const r = await runner.run({ workspace: repo.dir, event: 'pull_request', payload: pullRequestPayload(), inputs: { command: 'validate', source: 'gitops', comment: 'false' }, apiUrl: 'http://127.0.0.1:9' });
    expect(r.summary.length).toBeGreaterThan(0);
    expect(Buffer.byteLength(r.summary)).toBeLessThanOrEqual(githubSummaryLimit);
    expect(r.summary).toMatch(/The report is too long for a job summary \(\d+ bytes\): it was cut here\.\*\* The whole report is the file .*report\.md/);
  }, 120_000);

  it('summaryBody keeps a report that fits, and cuts one that does not at a line, within the limit', async () => {
    const { summaryBody } = await import('../../src/github-action/comment.js');
    expect(summaryBody('short\nreport\n', '/tmp/r/report.md', 100)).toBe('short\nreport\n');
    const long = Array.from({ length: 100 }, (_, i) => `line ${i} é`).join('\n');
    const cut = summaryBody(long, '/tmp/r/report.md', 600);
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(600);
    expect(cut.split('\n\n> [!WARNING]')[0]!.split('\n').every((l) => /^line \d+ é$/.test(l))).toBe(true);
  });
});
