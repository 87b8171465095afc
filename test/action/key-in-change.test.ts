/**
 * The pull request never carries a key: the bundled Action refuses a change whose files (any
 * file, not only manifests) hold a key value in the format, at file:line:col, never printing it;
 * a file the change did not touch is not its business.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/api/key-format.js';
import { actionRunner, pullRequestPayload, type ActionRunner } from '../support/action-runner.js';
import { newRepo, type Repo } from '../gitops/git-repo.js';

const team = (name: string) => `apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: ${name}\nspec:\n  users: [ana]\n`;

describe('the Action refuses a change holding a key value', () => {
  let repo: Repo;
  let runner: ActionRunner;
  let base: string;
  const key = generateKey();
  const older = generateKey();

  beforeAll(async () => {
    runner = actionRunner();
    repo = await newRepo({ withExamples: false });
    repo.write('gitops/platform.yaml', team('platform'));
    // Already on the base branch: not this pull request's doing.
    repo.write('docs/old-notes.md', `notes\n${older}\n`);
    await repo.commit('base');
    base = (await repo.git.revparse(['HEAD'])).trim();
    repo.write('deploy/ci.env', `# CI settings\nREGION=eu\nTEAMKEYS_TOKEN=${key}\n`);
    await repo.commit('pull request');
  });
  afterAll(async () => {
    await repo?.cleanup();
  });

  it('a key planted in a changed non-manifest file: the run fails, annotated at file:line:col, the value never printed', async () => {
    const r = await runner.run({ workspace: repo.dir, event: 'pull_request', payload: pullRequestPayload({ sha: base }), inputs: { command: 'validate', source: 'gitops', comment: 'false' }, apiUrl: 'http://127.0.0.1:9' });
    expect(r.code, r.log).not.toBe(0);
    expect(r.outputs.outcome).toBe('invalid');
    expect(r.log).toMatch(/::error title=teamkeys,file=deploy\/ci\.env,line=3,col=16::holds an access key value \(teamkeys format; the value is not shown\)/);
    expect(r.log).not.toContain('old-notes.md');
    for (const text of [r.log, r.summary]) {
      expect(text).not.toContain(key);
      expect(text).not.toContain(older);
    }
  });
});
