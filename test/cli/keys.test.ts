/**
 * `teamkeys keys` as a user runs it: the built CLI against a real `teamkeys serve` process (over
 * TLS, with an administrator's and a plain user's key) and against the embedded store, both on
 * one SQLite file written beforehand as the server would write it. Real time: each key's ttl is
 * chosen so the answers cannot change while the test runs (3 days: expiring within 14d; 60 days:
 * not); the one old last use is written into status as the server's activity recorder writes it.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { KubeObject } from '../../src/api/types.js';
import type { KeyRow } from '../../src/auth/key-listing.js';
import { runKeys } from '../../src/cli/commands/keys-run.js';
import { openEmbedded } from '../../src/cli/embedded.js';
import { day as dayMs, ManualClock } from '../support/clock.js';
import { accessKey, team as teamObject } from '../support/manifests.js';
import { startServe, type Served } from '../support/serve-process.js';
import { teamkeys } from '../support/cli.js';

const day = 86_400;
const adminKey = 'A'.repeat(24) + 'dmin'.repeat(4) + 'x'.repeat(8);
const anaKey = 'a'.repeat(20) + 'N'.repeat(20) + '0'.repeat(8);
const secrets = [adminKey, anaKey];
const longAgo = new Date(Date.now() - 100 * day * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

const key = (name: string, spec: Record<string, unknown>): KubeObject => accessKey(name, spec);

/** The store, written as a server would: the bootstrap administrator, a team, keys of every kind of owner. */
async function seed(store: string, encryptionKeyFile: string): Promise<void> {
  const { registry, close } = await openEmbedded(store, { encryptionKeyFile });
  try {
    const team = (name: string, spec: Record<string, unknown>) => registry.teams.create(teamObject(name, spec));
    await team('admins', { users: ['admin'], clusterRoles: [{ name: 'management-admin' }] });
    await team('payments', { users: ['bo'] });
    const keys = registry.ownedaccesskeys;
    await keys.create(key('admin', { user: 'admin', type: 'User', key: adminKey }));
    await keys.create(key('ana-soon', { user: 'ana', ttl: 3 * day, key: anaKey, description: 'ana | the <b>laptop</b>' }));
    await keys.create(key('ana-later', { user: 'ana', ttl: 60 * day, scope: { roles: [{ role: 'cli' }] } }));
    await keys.create(key('login-ana-x1', { user: 'ana', type: 'Login', identityRefresh: new Date().toISOString(), ttl: 60 * day }));
    await keys.create(key('bo-old', { user: 'bo', disabled: true }));
    await keys.patch('bo-old', 'merge', { status: { lastActivity: longAgo } }, { subresource: 'status', fieldManager: 'teamkeys-activity' });
    await keys.create(key('payments-ci', { team: 'payments', ttl: 3 * day, scope: { rules: [{ verbs: ['get'] }, { verbs: ['list'] }] } }));
    await keys.create(key('robot', { subject: 'ci-bot', scope: { projects: [{ project: 'p1' }] } }));
    // A subject is free text: in Markdown it must stay one cell of plain text.
    await keys.create(key('odd', { subject: 'ops|<b>bot</b>*', ttl: 60 * day }));
  } finally {
    await close();
  }
}

const names = (stdout: string) => (JSON.parse(stdout) as KeyRow[]).map((r) => r.name);

describe('teamkeys keys', () => {
  const dir = mkdtempSync(join(tmpdir(), 'teamkeys-keys-'));
  const db = join(dir, '.teamkeys', 'teamkeys.db');
  const keyFile = `${db}.encryption.yaml`;
  const embedded = ['--store', `sqlite:${db}`, '--encryption-key-file', keyFile];
  let served: Served;
  let asAdmin: string[];
  let asAna: string[];

  beforeAll(async () => {
    mkdirSync(join(dir, '.teamkeys'));
    await seed(`sqlite:${db}`, keyFile);
    served = await startServe(['--store', `sqlite:${db}`, '--log-level', 'warn'], { env: { TEAMKEYS_ADMIN_KEY: adminKey } });
    writeFileSync(join(dir, 'admin.key'), `${adminKey}\n`, { mode: 0o600 });
    writeFileSync(join(dir, 'ana.key'), `${anaKey}\n`, { mode: 0o600 });
    const server = ['--server', served.url, '--ca-file', join(served.dir, 'tls/cert.pem')];
    asAdmin = [...server, '--token-file', join(dir, 'admin.key')];
    asAna = [...server, '--token-file', join(dir, 'ana.key')];
  });
  afterAll(async () => {
    await served?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const run = (args: string[], env: Record<string, string> = {}) => {
    const r = teamkeys(['keys', ...args], { cwd: dir, env });
    for (const s of secrets) expect(r.stdout + r.stderr).not.toContain(s);
    return r;
  };

  it('-o json: every key the administrator may see, in the documented shape, without a key value', () => {
    const r = run([...asAdmin, '-o', 'json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const rows = JSON.parse(r.stdout) as KeyRow[];
    expect(rows.map((k) => k.name)).toEqual(['admin', 'ana-later', 'ana-soon', 'bo-old', 'login-ana-x1', 'odd', 'payments-ci', 'robot']);
    const by = Object.fromEntries(rows.map((k) => [k.name, k]));
    expect(Object.keys(by['ana-soon']!)).toEqual(['name', 'displayName', 'type', 'owner', 'createdAt', 'ageSeconds', 'lastUsedAt', 'unusedSeconds', 'expiresAt', 'expiresInSeconds', 'expired', 'disabled', 'scope', 'rotation', 'valueAgeSeconds', 'nextRotationAt']);
    expect(by['ana-soon']).toMatchObject({ type: 'User', owner: { kind: 'user', name: 'ana' }, disabled: false, expired: false, scope: 'full', rotation: { state: 'none', rotatedAt: null, previousValidUntil: null } });
    expect(by['ana-soon']!.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(Date.parse(by['ana-soon']!.expiresAt!) - Date.parse(by['ana-soon']!.createdAt!)).toBe(3 * day * 1000);
    expect(by['ana-soon']!.expiresInSeconds).toBeGreaterThan(3 * day - 600);
    expect(by['login-ana-x1']).toMatchObject({ type: 'Login', owner: { kind: 'user', name: 'ana' } });
    expect(by['payments-ci']).toMatchObject({ owner: { kind: 'team', name: 'payments' }, scope: 'rules: 2' });
    expect(by['ana-later']!.scope).toBe('cli (read-only)');
    expect(by.robot).toMatchObject({ owner: { kind: 'subject', name: 'ci-bot' }, scope: 'projects only: no management access', expiresAt: null, expiresInSeconds: null });
    expect(by['bo-old']).toMatchObject({ disabled: true, lastUsedAt: longAgo });
    expect(by['bo-old']!.unusedSeconds).toBeGreaterThanOrEqual(100 * day);
  });

  it('filters: --expiring, --unused, --user, --team, --subject, and any of them together', () => {
    expect(names(run([...asAdmin, '--expiring', '14d', '-o', 'json']).stdout)).toEqual(['ana-soon', 'payments-ci']);
    expect(names(run([...asAdmin, '--expiring', '90d', '-o', 'json']).stdout)).toEqual(['ana-later', 'ana-soon', 'login-ana-x1', 'odd', 'payments-ci']);
    expect(names(run([...asAdmin, '--unused', '90d', '-o', 'json']).stdout)).toEqual(['bo-old']);
    expect(names(run([...asAdmin, '--user', 'ana', '-o', 'json']).stdout)).toEqual(['ana-later', 'ana-soon', 'login-ana-x1']);
    // Team keys only: bo is a member of payments, his own key is not the team's.
    expect(names(run([...asAdmin, '--team', 'payments', '-o', 'json']).stdout)).toEqual(['payments-ci']);
    expect(names(run([...asAdmin, '--subject', 'ci-bot', '-o', 'json']).stdout)).toEqual(['robot']);
    expect(names(run([...asAdmin, '--user', 'ana', '--expiring', '14d', '-o', 'json']).stdout)).toEqual(['ana-soon']);
    expect(names(run([...asAdmin, '--team', 'payments', '--unused', '90d', '-o', 'json']).stdout)).toEqual([]);
    const none = run([...asAdmin, '--user', 'nobody']);
    expect(none).toMatchObject({ code: 0, stdout: 'No access keys found.\n' });
  });

  it('a user who may see only their own keys gets only those (TEAMKEYS_TOKEN works as --token-file does)', () => {
    const r = run([...asAna, '-o', 'json']);
    expect(r.code).toBe(0);
    expect(names(r.stdout)).toEqual(['ana-later', 'ana-soon', 'login-ana-x1']);
    const byEnv = run(['--server', served.url, '--ca-file', join(served.dir, 'tls/cert.pem'), '--team', 'payments', '-o', 'json'], { TEAMKEYS_TOKEN: anaKey });
    expect(byEnv).toMatchObject({ code: 0, stdout: '[]\n' });
  });

  it('last use is the server\'s record of it: the key ana just listed with shows as used, the others never', () => {
    // The server writes status.lastActivity off the request path: the next listings see it (a bounded wait for that write).
    let rows: KeyRow[] = [];
    for (let i = 0; i < 10 && !rows.find((r) => r.name === 'ana-soon')?.lastUsedAt; i++) rows = JSON.parse(run([...asAna, '-o', 'json']).stdout) as KeyRow[];
    const soon = rows.find((r) => r.name === 'ana-soon')!;
    expect(Date.now() - Date.parse(soon.lastUsedAt!)).toBeLessThan(120_000);
    expect(soon.unusedSeconds).toBeLessThan(120);
    expect(rows.find((r) => r.name === 'ana-later')!.lastUsedAt).toBeNull();
    expect(names(run([...asAna, '--unused', '1h', '-o', 'json']).stdout)).toEqual([]);
  });

  it('the table (the default) reads as words; piped, it has no colour', () => {
    const r = run([...asAdmin, '--expiring', '14d']);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+TYPE\s+OWNER\s+AGE\s+LAST USE\s+EXPIRES\s+DISABLED\s+SCOPE\s+ROTATION\s+VALUE AGE\s+NEXT ROTATION$/);
    // Ages of keys made in beforeAll: seconds, or minutes when the suite runs slowly (humanDuration).
    const age = String.raw`\d+(s|m(\d+s)?)`;
    expect(lines[1]).toMatch(new RegExp(String.raw`^ana-soon\s+User\s+user:ana\s+${age}\s+(never|${age} ago)\s+in 2d2[0-3]h\s+false\s+full\s+—\s+${age}\s+—$`));
    expect(lines[2]).toMatch(new RegExp(String.raw`^payments-ci\s+User\s+team:payments\s+${age}\s+never\s+in 2d2[0-3]h\s+false\s+rules: 2\s+—\s+${age}\s+—$`));
    expect(r.stdout).not.toContain('\u001b[');
    const old = run([...asAdmin, '--unused', '90d']).stdout.split('\n')[1];
    expect(old).toMatch(new RegExp(String.raw`^bo-old\s+User\s+user:bo\s+${age}\s+100d ago\s+never\s+true\s+full\s+—\s+${age}\s+—$`));
  });

  it('-o markdown: a table whose cells are escaped', () => {
    const r = run([...asAdmin, '--user', 'ana', '-o', 'markdown']);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('| Name | Type | Owner | Age | Last Use | Expires | Disabled | Scope | Rotation | Value Age | Next Rotation |');
    expect(lines[1]).toBe('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |');
    expect(lines[2]).toMatch(/^\| ana-later \| User \| user:ana \| \d+s \| never \| in 59d \| false \| cli \(read-only\) \| — \| \d+s \| — \|$/);
    expect(lines[4]).toMatch(/^\| login-ana-x1 \| Login \| user:ana \|/);
    const odd = run([...asAdmin, '--subject', 'ops|<b>bot</b>*', '-o', 'markdown']).stdout.split('\n')[2];
    expect(odd).toMatch(/^\| odd \| User \| subject:ops&#124;&lt;b&gt;bot&lt;\/b&gt;&#42; \| /);
    expect(odd!.split(' | ')).toHaveLength(11);
  });

  it('the embedded store: --store, or the default .teamkeys/teamkeys.db of the current folder', () => {
    const r = run([...embedded, '--expiring', '14d', '-o', 'json']);
    expect(r.stderr).toBe('');
    expect(names(r.stdout)).toEqual(['ana-soon', 'payments-ci']);
    const byDefault = run(['--unused', '90d', '-o', 'json'], { TEAMKEYS_ENCRYPTION_KEY_FILE: keyFile });
    expect(byDefault.stderr).toBe('');
    expect(names(byDefault.stdout)).toEqual(['bo-old']);
    // No default store in the folder: refused, not made empty.
    const elsewhere = teamkeys(['keys'], { cwd: mkdtempSync(join(dir, 'empty-')) });
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.stderr).toMatch(/^error: no target: give --server URL/);
  });

  it('through its clock, the same store a month later: the 3-day keys expired, the 60-day ones not yet expiring within 14d', async () => {
    const clock = new ManualClock();
    const listAt = async (flags: Record<string, string>) => {
      const printed: string[] = [];
      const log = vi.spyOn(console, 'log').mockImplementation((line: string) => void printed.push(line));
      try {
        await runKeys({ store: `sqlite:${db}`, encryptionKeyFile: keyFile, apiGroup: 'management.service', output: 'json', ...flags }, clock.now);
      } finally {
        log.mockRestore();
      }
      return JSON.parse(printed.join('\n')) as KeyRow[];
    };
    expect((await listAt({ expiring: '14d' })).map((r) => r.name)).toEqual(['ana-soon', 'payments-ci']);
    clock.advance(30 * dayMs);
    const month = await listAt({ expiring: '14d' });
    expect(month.map((r) => [r.name, r.expired])).toEqual([['ana-soon', true], ['payments-ci', true]]);
    // Every key was made (or last used) about 30 days ago by now; bo's last use was 100 days before that.
    expect(await listAt({ unused: '29d' })).toHaveLength(8);
    expect((await listAt({ unused: '31d' })).map((r) => r.name)).toEqual(['bo-old']);
    clock.advance(20 * dayMs);
    expect((await listAt({ expiring: '14d', user: 'ana' })).map((r) => r.name)).toEqual(['ana-later', 'ana-soon', 'login-ana-x1']);
  });

  it('bad flag values: one line naming the flag, exit 1, nothing read', () => {
    const bad = (args: string[], message: string) => {
      const r = run(args);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(`error: ${message}\n`);
      expect(r.code).toBe(1);
    };
    bad(['--expiring', 'soon'], '--expiring must be a duration such as 30s, 5m, 90d or 500ms, not "soon"');
    bad(['--unused', '0d'], '--unused must be a duration such as 30s, 5m, 90d or 500ms, not "0d"');
    bad(['-o', 'yaml'], '--output must be table, json or markdown, not "yaml"');
    bad(['--user', 'ana', '--team', 'payments'], "--user and --team select different owners and a key has one owner: give one of them (a team member's own keys: --user)");
    bad(['--team', ''], '--team needs a name, not an empty value');
    bad(['--server', 'ftp://x', '--token-file', join(dir, 'admin.key')], '--server must be an https:// (or http://) URL such as https://host:8080, not "ftp://x"');
  });

  it('shell completion knows the command, its flags and its output formats', () => {
    const script = teamkeys(['completion', 'bash']).stdout;
    const complete = (...words: string[]) => {
      const line = ['teamkeys', ...words];
      const r = spawnSync('bash', ['--norc', '-c', `${script}\nCOMP_WORDS=(${line.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${line.length - 1}; _teamkeys; printf '%s\\n' "\${COMPREPLY[@]}"`], { encoding: 'utf8' });
      return r.stdout.split('\n').filter(Boolean).sort();
    };
    expect(complete('ke')).toEqual(['keys']);
    expect(complete('keys', '--ex')).toEqual(['--expiring']);
    expect(complete('keys', '-o', '')).toEqual(['json', 'markdown', 'table']);
  });
});
