import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isGitUrl, normalizeGitUrl, redactCredentials, withoutCredentials } from '../../src/gitops/source/git-url.js';
import { isGitSource } from '../../src/gitops/source/load.js';
import { teamkeys } from '../support/cli.js';

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

describe('credentials are cut from every address form (issue 24, point 11)', () => {
  it.each([
    ['https://ci@acme.com:ghp_TOKEN@host/repo.git', 'https://host/repo.git'],
    ['https://x-access-token:ghs_abc@github.com/acme/teams.git', 'https://github.com/acme/teams.git'],
    ['https://ghp_TOKEN@GitHub.com/acme/teams', 'https://GitHub.com/acme/teams'],
    ['https://u:p%40ss@host:8443/a?x=1', 'https://host:8443/a?x=1'],
    ['ssh://git:pw@github.com:22/acme/teams.git', 'ssh://github.com:22/acme/teams.git'],
    ['https://u:ab/cd@host/x', 'https://host/x'],
    ['ci@acme.com:ghp_TOKEN@host:repo.git', 'host:repo.git'],
    ['user:pass@host:org/repo', 'host:org/repo'],
    ['git@github.com:acme/teams.git', 'git@github.com:acme/teams.git'],
    ['https://github.com/acme/teams', 'https://github.com/acme/teams'],
  ])('%s -> %s', (address, shown) => {
    expect(withoutCredentials(address)).toBe(shown);
    expect(redactCredentials(`fatal: unable to access '${address}/': Could not resolve host`)).toBe(`fatal: unable to access '${shown}/': Could not resolve host`);
  });

  it('scp-like addresses with a password are git remotes, named by their host', () => {
    expect(isGitUrl('user:pass@host:org/repo')).toBe(true);
    expect(normalizeGitUrl('ci@acme.com:ghp_TOKEN@host:org/repo.git')).toBe('host/org/repo');
  });

  it('for any user and password in any address form, in any message, neither appears in the output (generated)', () => {
    // Userinfo as git takes it: anything but whitespace and the characters that end an authority.
    const secretChars = fc.string({ unit: fc.constantFrom(...'abcXYZ019_-.~!$&\'()*+,;=:@%'.split('')), minLength: 1, maxLength: 12 });
    const user = secretChars.map((s) => `USR${s}`);
    const password = secretChars.map((s) => `PWD${s}`);
    const host = fc.constantFrom('github.com', 'git.example.com:8443', '127.0.0.1', '[::1]');
    const path = fc.constantFrom('acme/teams.git', 'a/b', '', 'x@y/z');
    const form = fc.constantFrom('https', 'http', 'ssh', 'git+ssh', 'scp', 'ftp');
    const wrap = fc.constantFrom(['', ''], ["'", "'"], ['"', '":'], ['<', '>'], ['(', ').'], ['remote=', '']);
    fc.assert(
      fc.property(user, password, fc.boolean(), host, path, form, wrap, (u, p, withUser, h, pa, f, [before, after]) => {
        // An scp-like address's user alone is an ssh login name, kept; with a password both go.
        const userinfo = withUser || f === 'scp' ? `${u}:${p}` : p;
        const address = f === 'scp' ? `${userinfo}@${h.replace(/:\d+$/, '')}:${pa}` : `${f}://${userinfo}@${h}/${pa}`;
        const outputs = [withoutCredentials(address), redactCredentials(`fatal: could not read ${before}${address}${after} (exit 128)\nremote: ${address}`)];
        for (const out of outputs) {
          expect(out).not.toContain(p);
          if (withUser || f === 'scp') expect(out).not.toContain(u);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('a git source that cannot be read names it without the token, git\'s own message included', () => {
    const r = teamkeys(['validate', '--source', 'https://ci@acme.com:ghp_SECRETTOKEN123@127.0.0.1:9/repo.git']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('cannot read git source https://127.0.0.1:9/repo.git');
    expect(`${r.stdout}${r.stderr}`).not.toContain('ghp_SECRETTOKEN123');
    expect(`${r.stdout}${r.stderr}`).not.toContain('acme.com');
  });
});
