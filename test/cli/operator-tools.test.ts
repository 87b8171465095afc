/**
 * What Argo CD, Flux and kubectl users reach for, over real processes: `teamkeys diff` (unified,
 * exit 0/1/2 as kubectl diff), `get --server`, `sync` against a running sidecar, `-o yaml`,
 * colour only on a terminal and never with NO_COLOR, `version` with the commit, and shell
 * completion scripts that complete in a real bash.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { Report } from '../../src/gitops/report/report.js';
import { newRepo, type Repo } from '../gitops/git-repo.js';
import { kubectl, kubectlPath, startServe, type Served } from '../server/serve-process.js';
import { bin, root, teamkeys } from '../support/cli.js';

const escape = '\u001b[';
const team = (name: string, displayName = name) => `apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: ${name}\nspec:\n  displayName: ${displayName}\n`;

describe('the tools of a GitOps operator', () => {
  let served: Served;
  let repo: Repo;
  const target = () => ['--server', served.url, '--token-file', join(served.dir, 'admin.key'), '--ca-file', join(served.dir, 'tls/cert.pem')];
  const source = () => ['--source', join(repo.dir, 'gitops')];

  beforeAll(async () => {
    kubectlPath();
    served = await startServe();
    repo = await newRepo({ withExamples: false });
    cpSync(join(root, 'examples/gitops'), join(repo.dir, 'gitops'), { recursive: true });
    await repo.commit('examples');
  });
  afterAll(async () => {
    await served.stop();
    repo.cleanup();
  });

  it('diff: a unified diff of git against live, exit 1 on differences, 0 when none, 2 on an error', () => {
    const first = teamkeys(['diff', ...source(), ...target()]);
    expect(first.code, first.stderr).toBe(1);
    expect(first.stdout).toContain('--- /dev/null\n+++ git/Team/platform\n@@ -0,0 +1,');
    expect(first.stdout).toContain('+  displayName: Platform\n');
    expect(first.stdout).not.toContain(escape);
    // Who gains what, beside the patch (on stderr: stdout stays a patch).
    expect(first.stderr).toContain('  + ana gains cluster role management-admin (via team platform)\n');
    expect(first.stdout).not.toContain('Access:');
    expect(teamkeys(['apply', ...source(), ...target()]).code).toBe(0);
    const none = teamkeys(['diff', ...source(), ...target()]);
    expect(none).toMatchObject({ code: 0, stdout: '' });
    expect(kubectl(served, ['patch', 'team', 'platform', '--type=merge', '-p', '{"spec":{"displayName":"Changed by hand"}}']).code).toBe(0);
    const drift = teamkeys(['diff', ...source(), ...target()]);
    expect(drift.code).toBe(1);
    expect(drift.stdout).toMatch(/^--- live\/Team\/platform\n\+\+\+ git\/Team\/platform\n@@ -\d+,\d+ \+\d+,\d+ @@\n/);
    expect(drift.stdout).toContain('-  displayName: Changed by hand\n+  displayName: Platform\n');
    expect(drift.stdout).not.toContain('managedFields');
    // Nothing was written by diff.
    expect(kubectl(served, ['get', 'team', 'platform', '-o', 'jsonpath={.spec.displayName}']).stdout).toBe('Changed by hand');
    const broken = mkdtempSync(join(tmpdir(), 'teamkeys-broken-'));
    try {
      writeFileSync(join(broken, 'bad.yaml'), 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: bad\nspec:\n  users: ana\n');
      const invalid = teamkeys(['diff', '--source', broken, ...target()]);
      expect(invalid.code).toBe(2);
      expect(invalid.stderr).toContain('bad.yaml:6:10: spec.users: Invalid value');
      expect(invalid.stderr).toContain('error: the manifests are invalid: nothing to compare');
    } finally {
      rmSync(broken, { recursive: true, force: true });
    }
    const unreachable = teamkeys(['diff', ...source(), '--server', 'https://127.0.0.1:1', '--token-file', join(served.dir, 'admin.key')]);
    expect(unreachable.code).toBe(2);
  });

  it('get --server: tables, names, YAML, selectors and NotFound, as kubectl get', () => {
    const names = teamkeys(['get', 'teams', ...target(), '-o', 'name']);
    expect(names.code, names.stderr).toBe(0);
    expect(names.stdout.split('\n')).toEqual(expect.arrayContaining(['team/admins', 'team/platform', 'team/payments']));
    const table = teamkeys(['get', 'oak', 'payments-ci', ...target()]);
    expect(table.stdout).toMatch(/^NAME\s+/);
    expect(table.stdout).toMatch(/^payments-ci\s/m);
    const yaml = parse(teamkeys(['get', 'team', 'platform', ...target(), '-o', 'yaml']).stdout) as { kind: string; spec: { owner: { user: string } } };
    expect(yaml).toMatchObject({ kind: 'Team', spec: { owner: { user: 'ana' } } });
    expect(teamkeys(['get', 'teams', ...target(), '-l', 'department=security', '-o', 'name']).stdout.trim()).toBe('team/auditors');
    const missing = teamkeys(['get', 'team', 'nobody', ...target()]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('Error from server (NotFound): teams.management.service "nobody" not found\n');
  });

  it('-o yaml wherever -o json is: validate, plan and version', () => {
    const plan = parse(teamkeys(['plan', ...source(), ...target(), '-o', 'yaml']).stdout) as Report;
    expect(plan).toMatchObject({ apiVersion: 'teamkeys/v1', kind: 'Report', mode: 'plan' });
    const validate = teamkeys(['validate', join(repo.dir, 'gitops/teams/typo.yaml'), '-o', 'yaml']);
    expect(validate.code).toBe(1);
    expect((parse(validate.stdout) as Report).errors[0]).toMatchObject({ message: 'no such file' });
    expect(parse(teamkeys(['version', '-o', 'yaml']).stdout)).toMatchObject({ version: expect.any(String), commit: expect.any(String) });
  });

  it('colour on a terminal only, and never with NO_COLOR', () => {
    expect(kubectl(served, ['patch', 'team', 'platform', '--type=merge', '-p', '{"spec":{"displayName":"Changed again"}}']).code).toBe(0);
    // script(1) gives the command a pseudo-terminal, as a person's shell does.
    const onTerminal = (env: Record<string, string>) =>
      spawnSync('script', ['-qec', [process.execPath, bin, 'plan', ...source(), ...target()].map((a) => `'${a}'`).join(' '), '/dev/null'], {
        encoding: 'utf8',
        env: { ...process.env, TEAMKEYS_STORE: '', TERM: 'xterm-256color', ...env },
        timeout: 30_000,
      });
    const coloured = onTerminal({ NO_COLOR: '' });
    expect(coloured.stdout).toContain(`${escape}33m~ Team/platform [drift]`);
    const plain = onTerminal({ NO_COLOR: '1' });
    expect(plain.stdout).toContain('~ Team/platform [drift]');
    expect(plain.stdout).not.toContain(escape);
    expect(teamkeys(['plan', ...source(), ...target()]).stdout).not.toContain(escape);
  });

  it('version: the package version and the commit dist/ was built from; "unknown" when built outside git', () => {
    const info = JSON.parse(teamkeys(['version', '-o', 'json']).stdout) as { version: string; commit: string };
    const head = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: root, encoding: 'utf8' }).stdout.trim();
    expect(info.version).toBe((JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version);
    expect(info.commit).toMatch(/^[0-9a-f]{40}$/);
    // The build that made dist/ ran at this commit or an earlier one of this branch.
    expect(spawnSync('git', ['merge-base', '--is-ancestor', info.commit, head], { cwd: root }).status).toBe(0);
    expect(teamkeys(['version']).stdout).toContain(`teamkeys ${info.version} (commit ${info.commit}`);
    // An unpacked source tarball: no .git anywhere above it.
    const outside = mkdtempSync(join(tmpdir(), 'teamkeys-nogit-'));
    try {
      mkdirSync(join(outside, 'scripts'));
      mkdirSync(join(outside, 'dist/cli'), { recursive: true });
      cpSync(join(root, 'scripts/after-build.mjs'), join(outside, 'scripts/after-build.mjs'));
      cpSync(join(root, 'package.json'), join(outside, 'package.json'));
      writeFileSync(join(outside, 'dist/cli/main.js'), '');
      expect(spawnSync(process.execPath, [join(outside, 'scripts/after-build.mjs')], { encoding: 'utf8', env: { ...process.env, GIT_CEILING_DIRECTORIES: tmpdir() } }).status).toBe(0);
      expect(JSON.parse(readFileSync(join(outside, 'dist/build-info.json'), 'utf8'))).toMatchObject({ commit: 'unknown' });
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it('completion: the bash script completes commands, flags, flag values and resources in a real bash', () => {
    const script = teamkeys(['completion', 'bash']);
    expect(script.code).toBe(0);
    const complete = (...words: string[]) => {
      const line = ['teamkeys', ...words];
      const r = spawnSync('bash', ['--norc', '-c', `${script.stdout}\nCOMP_WORDS=(${line.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${line.length - 1}; _teamkeys; printf '%s\\n' "\${COMPREPLY[@]}"`], { encoding: 'utf8' });
      expect(r.stderr).toBe('');
      return r.stdout.split('\n').filter(Boolean).sort();
    };
    expect(complete('d')).toEqual(['delete', 'deny', 'diff']);
    expect(complete('plan', '--so')).toEqual(['--source', '--source-id']);
    expect(complete('plan', '-o', '')).toEqual(['json', 'markdown', 'text', 'yaml']);
    expect(complete('get', 'o')).toEqual(['oak', 'ownedaccesskey', 'ownedaccesskeys']);
    expect(complete('completion', '')).toEqual(['bash', 'fish', 'zsh']);
    expect(complete('sync', '--no')).toEqual(['--no-wait']);
    const zsh = teamkeys(['completion', 'zsh']).stdout;
    expect(zsh).toMatch(/^#compdef teamkeys\n/);
    expect(zsh).toContain("'diff:show how the live objects differ from git");
    const fish = teamkeys(['completion', 'fish']).stdout;
    expect(fish).toContain("complete -c teamkeys -n '__fish_seen_subcommand_from plan' -s o -l output -x -a 'text json yaml markdown'");
    expect(teamkeys(['completion', 'tcsh'])).toMatchObject({ code: 1, stderr: 'error: unsupported shell "tcsh": choose bash, zsh, fish\n' });
  });

  // .ci/run installs zsh and fish; a machine without them fails these two tests, saying so.
  const need = (shell: string) => expect(spawnSync('sh', ['-c', `command -v ${shell}`]).status, `${shell} is not installed (.ci/run installs it)`).toBe(0);
  it('completion: fish completes from its script', () => {
    need('fish');
    const dir = mkdtempSync(join(tmpdir(), 'teamkeys-fish-'));
    try {
      writeFileSync(join(dir, 'teamkeys.fish'), teamkeys(['completion', 'fish']).stdout);
      const r = spawnSync('fish', ['--no-config', '-c', `source ${join(dir, 'teamkeys.fish')}; complete -C 'teamkeys plan -o '; complete -C 'teamkeys di'`], { encoding: 'utf8' });
      expect(r.stderr).toBe('');
      expect(r.stdout.split('\n').map((l) => l.split('\t')[0]).filter(Boolean)).toEqual(['json', 'markdown', 'text', 'yaml', 'diff']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
  it('completion: the zsh script parses in zsh', () => {
    need('zsh');
    const r = spawnSync('zsh', ['-n'], { input: teamkeys(['completion', 'zsh']).stdout, encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
});

describe('teamkeys sync against a running sidecar', () => {
  let repo: Repo;
  let sidecar: Served;
  const flags = () => ['--server', sidecar.url, '--ca-file', join(sidecar.dir, 'tls/cert.pem')];

  beforeAll(async () => {
    repo = await newRepo({ withExamples: false });
    repo.write('teams/first.yaml', team('first'));
    await repo.commit('first team');
    sidecar = await startServe(['--sync-source', repo.dir, '--sync-ref', 'main', '--sync-interval', '1h']);
    // The first cycle must be over before the test commits more: a sync triggered while it runs
    // waits for that cycle, which did not see the later commit (CI failed on this under load).
    for (const started = Date.now(); kubectl(sidecar, ['get', 'team', 'first']).code !== 0; ) {
      if (Date.now() - started > 30_000) throw new Error('the sidecar did not apply its first cycle within 30 s');
      await new Promise((done) => setTimeout(done, 200));
    }
  });
  afterAll(async () => {
    await sidecar.stop();
    repo.cleanup();
  });

  it('triggers a cycle, waits for it and prints its report; asks for a key; --no-wait returns at once', () => {
    repo.write('teams/late.yaml', team('late-arrival'));
    spawnSync('git', ['-C', repo.dir, 'add', '-A']);
    expect(spawnSync('git', ['-C', repo.dir, 'commit', '-qm', 'late']).status).toBe(0);
    const r = teamkeys(['sync', ...flags(), '--token-file', join(sidecar.dir, 'admin.key')]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('+ Team/late-arrival');
    expect(r.stdout).toMatch(/^Created 1, /m);
    const json = JSON.parse(teamkeys(['sync', ...flags(), '--token-file', join(sidecar.dir, 'admin.key'), '-o', 'json']).stdout) as Report;
    expect(json).toMatchObject({ kind: 'Report', mode: 'apply' });
    const refused = teamkeys(['sync', ...flags()], { env: { TEAMKEYS_TOKEN: '' } });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^error: cannot read the daemon's metrics: HTTP 401.*\(the sidecar needs a management admin key: --token-file or TEAMKEYS_TOKEN\)\n$/);
    const quick = teamkeys(['sync', ...flags(), '--no-wait'], { env: { TEAMKEYS_TOKEN: sidecar.adminKey } });
    expect(quick).toMatchObject({ code: 0, stderr: `sync requested from ${new URL(sidecar.url).origin}\n` });
  });
});
