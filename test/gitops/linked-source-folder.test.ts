/**
 * The `source` folder itself, committed by a pull request as a symbolic link out of the checkout, was
 * read: every manifest behind it (files outside the workspace) reached the job summary and the
 * comment (found by a review). gitops.md promises "read files outside the source through a link (or
 * a linked `path`): refused at the link, nothing behind it read or named": the loader refuses such a
 * folder, and the Action refuses a source folder or path with any link on the way from the workspace.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actionRunner, pullRequestPayload, type ActionRunner } from '../support/action-runner.js';
import { newRepo, type Repo } from './git-repo.js';
import { loadSource } from '../../src/gitops/source/load.js';

describe('a pull request that turns the source folder into a link out of the checkout', () => {
  let repo: Repo;
  let outside: string;
  let runner: ActionRunner;

  beforeAll(async () => {
    outside = mkdtempSync(join(tmpdir(), 'teamkeys-outside-'));
    // What the runner holds outside the checkout (another job's files, a home folder): not the pull request's to read.
    mkdirSync(join(outside, 'finance-secrets'));
    writeFileSync(join(outside, 'finance-secrets/hidden.yaml'), 'apiVersion: management.service/v1\nkind: Secret\nmetadata:\n  name: db-password\n');
    writeFileSync(join(outside, 'registry-auth.json'), JSON.stringify({ auths: { 'ghcr.io': { auth: 'c2VjcmV0' } } }));
    repo = await newRepo({ withExamples: false });
    repo.write('gitops/platform.yaml', 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: platform\nspec:\n  users: [ana]\n');
    await repo.commit('base');
    // The pull request: the gitops folder replaced by a link.
    repo.remove('gitops');
    symlinkSync(outside, join(repo.dir, 'gitops'));
    await repo.commit('pull request');
    runner = actionRunner();
  });
  afterAll(() => {
    repo.cleanup();
    runner.cleanup();
    rmSync(outside, { recursive: true, force: true });
  });

  it('the loader refuses a source folder that is a link out of its work tree', async () => {
    const loaded = await loadSource({ source: join(repo.dir, 'gitops') });
    expect(loaded.manifests).toEqual([]);
    expect(loaded.errors.map((e) => e.message)).toContain('symbolic link outside the source');
  });

  it('the Action on pull_request names nothing of what is behind the link', async () => {
    const r = await runner.run({ workspace: repo.dir, event: 'pull_request', payload: pullRequestPayload(), inputs: { command: 'validate', source: 'gitops', comment: 'false' }, apiUrl: 'http://127.0.0.1:9' });
    expect(r.summary).not.toMatch(/registry-auth|finance-secrets|hidden\.yaml|Secret/);
    expect(r.code).not.toBe(0);
    expect(r.log).toMatch(/the source folder .*gitops is a symbolic link/);
  });
});
