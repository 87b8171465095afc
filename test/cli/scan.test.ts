/**
 * `teamkeys scan` and `teamkeys validate` find a planted key: exit 1, file:line:col, never the
 * value; the key is named only with --server and a caller's key that may list it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/api/key-format.js';
import { adminKey, startInProcess, type InProcess } from '../support/in-process.js';
import { bin, teamkeys, teamkeysAsync } from '../support/cli.js';

/** The CLI run without blocking this process (the in-process server must answer it meanwhile), with no caller's key from the environment. */
const scanAsync = (args: string[]) => teamkeysAsync(args, { env: { TEAMKEYS_TOKEN: '' } });

describe('teamkeys scan', () => {
  const dir = mkdtempSync(join(tmpdir(), 'teamkeys-scan-'));
  let server: InProcess;
  let leaked: string;
  const stranger = generateKey();
  const write = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };
  beforeAll(async () => {
    server = await startInProcess();
    const res = await server.fetch(`${server.api}/ownedaccesskeys`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ metadata: { name: 'deploy-bot' }, spec: { user: 'bot' } }) });
    leaked = ((await res.json()) as { spec: { key: string } }).spec.key;
    const reader = await server.fetch(`${server.api}/ownedaccesskeys`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ metadata: { name: 'nobody-key' }, spec: { user: 'nobody', key: `Nobody${'n'.repeat(58)}` } }) });
    expect(reader.status).toBe(201);
    write('admin.token', adminKey);
    write('nobody.token', `Nobody${'n'.repeat(58)}`);
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a planted key: exit 1 and file:line:col, never the value; a near miss (bad checksum) and a clean file are not reported', () => {
    const mistyped = `${leaked.slice(0, -1)}${leaked.endsWith('0') ? '1' : '0'}`;
    const planted = write('config.env', `# settings\nAPI_URL=https://x\n  TEAMKEYS_TOKEN=${leaked}\nOTHER=${mistyped}\n`);
    write('clean.txt', 'nothing here\n');
    const r = teamkeys(['scan', planted, join(dir, 'clean.txt')]);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout.trim().split('\n')).toEqual([`${planted}:3:18: a teamkeys access key; revoke it (POST /auth/revoke) or rotate it, and remove it from the file`]);
    expect(r.stderr).toContain('1 access key found');
    expect(`${r.stdout}${r.stderr}`).not.toContain(leaked);
    expect(teamkeys(['scan', join(dir, 'clean.txt')]).code).toBe(0);
  });

  it('reads stdin for -, and folders recursively', () => {
    const r = spawnSync(process.execPath, [bin, 'scan', '-'], { input: `first\nsecond ${stranger}\n`, encoding: 'utf8', env: { ...process.env, TEAMKEYS_STORE: '' } });
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/^<stdin>:2:8: a teamkeys access key;/);
    expect(r.stdout).not.toContain(stranger);
    const folder = teamkeys(['scan', dir]);
    expect(folder.code).toBe(1);
    expect(folder.stdout).toContain(`${join(dir, 'config.env')}:3:18:`);
  });

  it('names the key for a caller whose key may list it, and only for that caller', async () => {
    const file = join(dir, 'config.env');
    const admin = await scanAsync(['scan', file, '--server', server.base, '--token-file', join(dir, 'admin.token')]);
    expect(admin.code, admin.stderr).toBe(1);
    expect(admin.stdout).toContain(`${file}:3:18: a teamkeys access key (ownedaccesskey "deploy-bot");`);
    const nobody = await scanAsync(['scan', file, '--server', server.base, '--token-file', join(dir, 'nobody.token')]);
    expect(nobody.code, nobody.stderr).toBe(1);
    expect(nobody.stdout).not.toContain('deploy-bot');
    expect(nobody.stdout).toContain(`${file}:3:18: a teamkeys access key;`);
    for (const r of [admin, nobody]) expect(`${r.stdout}${r.stderr}`).not.toContain(leaked);
  });

  it('a path that does not exist is an error (exit 2), not a clean scan', () => {
    const r = teamkeys(['scan', join(dir, 'missing.txt')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('does not exist');
  });
});

describe('teamkeys validate refuses a manifest holding a key value', () => {
  it('names file:line:col for a key anywhere in a manifest (here an annotation), never the value', () => {
    const dir = mkdtempSync(join(tmpdir(), 'teamkeys-validate-key-'));
    try {
      const key = generateKey();
      writeFileSync(join(dir, 'team.yaml'), `apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: platform\n  annotations:\n    note: "${key}"\nspec:\n  users: [ana]\n`);
      const r = teamkeys(['validate', '--source', dir]);
      expect(r.code).toBe(1);
      expect(`${r.stdout}${r.stderr}`).toMatch(/team\.yaml:6:12: holds an access key value \(teamkeys format; the value is not shown\)/);
      expect(`${r.stdout}${r.stderr}`).not.toContain(key);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
