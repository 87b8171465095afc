/**
 * The sinks a key's value goes to: GitHub repository, environment and organization secrets (the
 * stand-in opens what it is sent) and 0600 files written atomically, never into the source.
 */
import { execFileSync } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sourceFolders, writeSink } from '../../src/gitops/keys/file-sink.js';
import { GitHubSecrets, KeyDeliveryError } from '../../src/gitops/keys/github-secrets.js';
import { parseSecretTarget, type FileSink, type GitHubTarget } from '../../src/gitops/keys/sinks.js';
import { startGitHubStandIn, type GitHubStandIn } from './github-standin.js';

const value = `V${'a1'.repeat(32)}`;
const target = (s: string) => parseSecretTarget(s) as GitHubTarget;

describe('GitHub sinks', () => {
  let github: GitHubStandIn;
  let secrets: GitHubSecrets;
  beforeAll(async () => {
    github = await startGitHubStandIn();
    secrets = new GitHubSecrets({ token: github.token, apiUrl: github.url });
  });
  afterAll(() => github.close());

  it('an environment secret is sealed for the environment and opened by GitHub', async () => {
    github.environments.add('acme/payments/production');
    await secrets.deliver(target('github-env:acme/payments/production/DEPLOY_KEY'), value);
    expect(github.secrets.get('acme/payments/env:production/DEPLOY_KEY')).toBe(value);
    expect(github.requests).toContain('PUT /repos/acme/payments/environments/production/secrets/DEPLOY_KEY');
  });

  it('an environment that does not exist is a failure naming the secret and what to fix, never the value', async () => {
    const err = await secrets.deliver(target('github-env:acme/payments/staging/DEPLOY_KEY'), value).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(KeyDeliveryError);
    expect((err as Error).message).toBe(
      'the key was not delivered to GitHub secret DEPLOY_KEY of environment staging of acme/payments: GitHub answered 404 "Not Found" to GET /repos/acme/payments/environments/staging/secrets/public-key (the token needs the "Secrets: read and write" permission on the repository and the environment must exist)',
    );
  });

  it('an organization secret is never created (who may read it is an administrator\'s choice)', async () => {
    await expect(secrets.deliver(target('github-org:acme/NEW_KEY'), value)).rejects.toThrow('the key was not delivered to GitHub organization secret NEW_KEY of acme: the secret does not exist, and teamkeys only updates organization secrets: create it first');
    expect(github.secrets.has('org:acme/NEW_KEY')).toBe(false);
    expect(github.requests.filter((r) => r.startsWith('PUT'))).not.toContain('PUT /orgs/acme/actions/secrets/NEW_KEY');
  });

  it('an existing organization secret keeps its visibility, and a selected one its whole repository list (resent, over pages)', async () => {
    github.orgVisibility.set('org:acme/SHARED_KEY', 'private');
    await secrets.deliver(target('github-org:acme/SHARED_KEY'), value);
    expect(github.secrets.get('org:acme/SHARED_KEY')).toBe(value);
    expect(github.orgVisibility.get('org:acme/SHARED_KEY')).toBe('private');
    const ids = Array.from({ length: 130 }, (_, i) => 1000 + i);
    github.orgVisibility.set('org:acme/NARROW_KEY', 'selected');
    github.orgRepositories.set('org:acme/NARROW_KEY', ids);
    await secrets.deliver(target('github-org:acme/NARROW_KEY'), value);
    expect(github.orgVisibility.get('org:acme/NARROW_KEY')).toBe('selected');
    expect(github.orgRepositories.get('org:acme/NARROW_KEY')).toEqual(ids);
    expect(github.secrets.get('org:acme/NARROW_KEY')).toBe(value);
    expect(github.requests).toContain('GET /orgs/acme/actions/secrets/NARROW_KEY/repositories?per_page=100&page=2');
  });
});

describe('file sinks', () => {
  const base = mkdtempSync(join(tmpdir(), 'file-sink-'));
  const file = (path: string) => parseSecretTarget(`file:${path}`) as FileSink;

  it('writes the value 0600 by rename (no temporary file left), replacing the old value', async () => {
    await writeSink(file('out/deploy.key'), 'old', { base });
    await writeSink(file('out/deploy.key'), value, { base });
    const path = join(base, 'out', 'deploy.key');
    expect(readFileSync(path, 'utf8')).toBe(`${value}\n`);
    expect(lstatSync(path).mode & 0o777).toBe(0o600);
    expect(readdirSync(join(base, 'out'))).toEqual(['deploy.key']);
  });

  it('a relative path starts at the key folder, and is refused without one', async () => {
    await writeSink(file('ci/relative.key'), value, { base: join(base, 'keys') });
    expect(readFileSync(join(base, 'keys', 'ci', 'relative.key'), 'utf8')).toBe(`${value}\n`);
    await expect(writeSink(file('relative.key'), value, {})).rejects.toThrow('the key was not delivered to file relative.key: a relative file: path is taken from the key folder, and no --key-dir was given');
  });

  it('a link planted in the file\'s place is replaced, not followed', async () => {
    const victim = join(base, 'victim.txt');
    writeFileSync(victim, 'untouched');
    const path = join(base, 'linked.key');
    symlinkSync(victim, path);
    await writeSink(file('linked.key'), value, { base });
    expect(readFileSync(victim, 'utf8')).toBe('untouched');
    expect(lstatSync(path).isSymbolicLink()).toBe(false);
  });

  it('a path inside the source repository is refused, also through a link to it', async () => {
    const repo = join(base, 'repo');
    mkdirSync(join(repo, 'gitops'), { recursive: true });
    execFileSync('git', ['init', '-q', repo]);
    const refuse = await sourceFolders({ source: join(repo, 'gitops') });
    await expect(writeSink(file('secrets/deploy.key'), value, { base: repo, refuse })).rejects.toThrow(/inside the source repository/);
    symlinkSync(repo, join(base, 'alias'));
    await expect(writeSink(file('deploy.key'), value, { base: join(base, 'alias'), refuse })).rejects.toThrow(/inside the source repository/);
    expect(readdirSync(repo)).not.toContain('secrets');
  });
});
