import { describe, expect, it } from 'vitest';
import { isGitUrl, normalizeGitUrl } from '../../src/gitops/source/git-url.js';
import { isGitSource } from '../../src/gitops/source/load.js';

describe('which --source values are git remotes (the loader and the daemon share this test)', () => {
  it.each([
    ['git@github.com:acme/teams.git', true],
    ['git@github.com:acme/teams', true],
    ['https://github.com/acme/teams', true],
    ['ssh://git@github.com/acme/teams.git', true],
    ['file:///srv/teams', true],
    ['/srv/git/teams.git', true],
    ['manifests', false],
    ['./one/manifests', false],
    ['/home/ana/teams', false],
  ])('%s -> %s', (source, git) => {
    expect(isGitUrl(source)).toBe(git);
    // What the daemon decides not to watch as a folder.
    expect(isGitSource({ source })).toBe(git);
  });

  it('any path with --ref is read as git', () => {
    expect(isGitSource({ source: 'manifests', ref: 'main' })).toBe(true);
  });
});

describe('normalized remote addresses (the default source id)', () => {
  it.each([
    ['git@github.com:acme/teams.git', 'github.com/acme/teams'],
    ['git@GitHub.com:Acme/Teams', 'github.com/Acme/Teams'],
    ['https://github.com/acme/teams', 'github.com/acme/teams'],
    ['https://github.com/acme/teams.git/', 'github.com/acme/teams'],
    ['https://x-access-token:ghs_abc@github.com/acme/teams.git', 'github.com/acme/teams'],
    ['ssh://git@github.com:22/acme/teams.git', 'github.com/acme/teams'],
    ['https://git.example.com:8443/platform/teams', 'git.example.com:8443/platform/teams'],
    ['https://git.example.com:443/platform/teams', 'git.example.com/platform/teams'],
    ['file:///srv/git/teams.git', '/srv/git/teams'],
    ['/srv/git/teams/.git', '/srv/git/teams'],
  ])('%s -> %s', (address, id) => {
    expect(normalizeGitUrl(address)).toBe(id);
  });

  it('resolves a relative remote against the repository it is configured in', () => {
    expect(normalizeGitUrl('../upstream.git', '/work/clone')).toBe('/work/upstream');
  });
});
