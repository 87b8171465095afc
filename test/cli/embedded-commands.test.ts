import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { root, teamkeys } from '../support/cli.js';

describe('teamkeys create / get / delete on the embedded store', () => {
  const dir = mkdtempSync(join(tmpdir(), 'teamkeys-cli-'));
  const store = `sqlite:${join(dir, 'store.db')}`;
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('--help lists the commands and exits 0', () => {
    const r = teamkeys(['--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Usage: teamkeys');
    for (const c of ['create', 'get', 'delete']) expect(r.stdout).toContain(c);
  });

  it('creates the example repository and lists it as a table', () => {
    const created = teamkeys(['create', '-f', join(root, 'examples/gitops'), '--store', store]);
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    expect(created.stdout).toContain('team.management.service/platform created');
    expect(created.stdout).toContain('ownedaccesskey.management.service/payments-ci created');
    const teams = teamkeys(['get', 'teams', '--store', store]);
    expect(teams.code).toBe(0);
    const lines = teams.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+DISPLAY NAME\s+USERS\s+GROUPS\s+AGE$/);
    expect(lines.slice(1).map((l) => l.split(/\s+/)[0])).toEqual(['auditors', 'payments', 'platform']);
  });

  it('shows one object as YAML without its key', () => {
    const r = teamkeys(['get', 'oak', 'payments-ci', '-o', 'yaml', '--store', store]);
    expect(r.code).toBe(0);
    const obj = parse(r.stdout) as { kind: string; spec: Record<string, unknown> };
    expect(obj.kind).toBe('OwnedAccessKey');
    expect(obj.spec.team).toBe('payments');
    expect(obj.spec.key).toBeUndefined();
  });

  it('reports a bad manifest as file:line:col with the server message and exits 1, creating the good ones', () => {
    const file = join(dir, 'mixed.yaml');
    writeFileSync(
      file,
      ['apiVersion: management.service/v1', 'kind: Team', 'metadata:', '  name: good-one', '---', 'apiVersion: management.service/v1', 'kind: Team', 'metadata:', '  name: Bad_Name', ''].join('\n'),
    );
    const r = teamkeys(['create', '-f', file, '--store', store]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('team.management.service/good-one created');
    expect(r.stderr).toContain(`${file}:6:1: Error from server (Invalid): Team.management.service "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name"`);
  });

  it('reports YAML syntax errors as file:line:col', () => {
    const file = join(dir, 'broken.yaml');
    writeFileSync(file, 'kind: Team\nmetadata:\n  name: [unclosed\n');
    const r = teamkeys(['create', '-f', file, '--store', store]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:\\d+:\\d+: `, 'm'));
  });

  it('answers like kubectl for a missing object and an unknown resource', () => {
    const missing = teamkeys(['get', 'teams', 'nobody', '--store', store]);
    expect(missing.code).toBe(1);
    expect(missing.stderr.trim()).toBe('Error from server (NotFound): teams.management.service "nobody" not found');
    const unknown = teamkeys(['get', 'widgets', '--store', store]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('the server doesn\'t have a resource type "widgets"');
  });

  it('refuses a bad store URL and a bad flag with exit code 1, one line each', () => {
    const badStore = teamkeys(['get', 'teams', '--store', 'mysql://x']);
    expect(badStore.code).toBe(1);
    expect(badStore.stderr).toContain('unsupported store URL "mysql://x"');
    const badFlag = teamkeys(['get', 'teams', '--bogus']);
    expect(badFlag.code).toBe(1);
    expect(badFlag.stderr).toBe("error: unknown option '--bogus' (see --help)\n");
  });

  it('deletes objects', () => {
    const r = teamkeys(['delete', 'teams', 'auditors', '--store', store]);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe('team.management.service "auditors" deleted');
    expect(teamkeys(['get', 'teams', 'auditors', '--store', store]).code).toBe(1);
  });
});
