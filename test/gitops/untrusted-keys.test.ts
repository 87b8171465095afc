/**
 * Issue 24, point 11: key files and saved plans when a pull request controls the folder. A link
 * planted in --key-dir never receives a key (it is not printed, not written through), a rotation
 * replaces the file without following anything, and a saved plan naming `../../x` is refused
 * before anything of it is used. Real files, the built CLI, the embedded store.
 */
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson } from '../../src/api/canonical-json.js';
import { checkKeyFile, writeKeyFile } from '../../src/gitops/keys/key-file.js';
import type { SavedPlan } from '../../src/gitops/saved/saved-plan.js';
import { teamkeys } from '../support/cli.js';

const key = (name: string) => `apiVersion: management.service/v1\nkind: OwnedAccessKey\nmetadata:\n  name: ${name}\nspec:\n  user: ana\n  type: User\n`;

describe('key files and saved plans in a folder a pull request controls', () => {
  let work: string;
  let source: string;
  let keys: string;
  let n = 0;
  const store = () => `sqlite:${join(work, `store-${++n}.db`)}`;
  const apply = (db: string, ...extra: string[]) => teamkeys(['apply', '--source', source, '--source-id', 'keys-test', '--store', db, '--key-dir', keys, ...extra], { cwd: work });

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'teamkeys-keys-'));
    source = join(work, 'source');
    keys = join(work, 'keys');
    mkdirSync(join(source, 'accesskeys'), { recursive: true });
    mkdirSync(keys);
    writeFileSync(join(source, 'accesskeys/ci2.yaml'), key('ci2'));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it.each([
    ['/dev/stdout', () => '/dev/stdout'],
    ['a file elsewhere', () => join(work, 'attacker-reads-this.txt')],
  ])('a planted keys/ci2.key -> %s is refused: the key is not created, printed or written', (_what, target) => {
    writeFileSync(join(work, 'attacker-reads-this.txt'), '');
    symlinkSync(target(), join(keys, 'ci2.key'));
    try {
      const db = store();
      const r = apply(db);
      expect(r.code).toBe(1);
      expect(r.stdout).toContain(`OwnedAccessKey/ci2: not created: ${join(keys, 'ci2.key')} is a symbolic link: refusing to write a key through it (remove the link)`);
      expect(`${r.stdout}${r.stderr}`).not.toMatch(/tk_[0-9A-Za-z]{49}/);
      expect(readFileSync(join(work, 'attacker-reads-this.txt'), 'utf8')).toBe('');
      expect(readlinkSync(join(keys, 'ci2.key'))).toBe(target());
      // Nothing was made that nobody holds the key of.
      expect(teamkeys(['get', 'oak', '--store', db, '-o', 'name'], { cwd: work }).stdout).not.toContain('ci2');
    } finally {
      rmSync(join(keys, 'ci2.key'));
    }
  });

  it('a key is written 0600 in the folder; a rotation replaces the file by rename, leaving no temporary file', async () => {
    const r = apply(store());
    expect(r.code).toBe(0);
    const file = join(keys, 'ci2.key');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const first = readFileSync(file, 'utf8');
    expect(first).toMatch(/^tk_[0-9A-Za-z]{49}\n$/);
    expect(await writeKeyFile(keys, 'ci2', 'rotated')).toBe(file);
    expect(readFileSync(file, 'utf8')).toBe('rotated\n');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(keys)).toEqual(['ci2.key']);
    rmSync(file);
  });

  it.each([['../../x'], ['a/b'], ['..'], ['.hidden'], ['UPPER'], ['']])('a key name %j is refused before anything is written', async (name) => {
    await expect(checkKeyFile(keys, name)).rejects.toThrow(/is not a valid object name \(DNS-1123 subdomain\), so it cannot name a key file/);
    await expect(writeKeyFile(keys, name, 'k')).rejects.toThrow(/not a valid object name/);
    expect(existsSync(join(work, 'x.key'))).toBe(false);
  });

  it('a key folder that is itself a link is refused', async () => {
    symlinkSync(join(work, 'elsewhere'), join(work, 'keys-link'));
    await expect(writeKeyFile(join(work, 'keys-link'), 'ci2', 'k')).rejects.toThrow(`the key folder ${join(work, 'keys-link')} is a symbolic link: give --key-dir the real folder`);
    expect(lstatSync(join(work, 'keys-link')).isSymbolicLink()).toBe(true);
    expect(existsSync(join(work, 'elsewhere'))).toBe(false);
  });

  it('report-dir and plan --out never write through a planted link; a plan path naming another file does not show its text', () => {
    const victim = join(work, 'victim.txt');
    writeFileSync(victim, 'SECRET-LINE-1\n');
    mkdirSync(join(work, 'reports'));
    symlinkSync(victim, join(work, 'reports/report.md'));
    symlinkSync(victim, join(work, 'plan-link.json'));
    const db = store();
    const planned = teamkeys(['plan', '--source', source, '--source-id', 'keys-test', '--store', db, '--out', join(work, 'plan-link.json'), '--report-dir', join(work, 'reports')], { cwd: work });
    expect(planned.code).toBe(0);
    expect(readFileSync(victim, 'utf8')).toBe('SECRET-LINE-1\n');
    expect(lstatSync(join(work, 'reports/report.md')).isFile()).toBe(true);
    expect(lstatSync(join(work, 'plan-link.json')).isFile()).toBe(true);
    // A report folder that is itself a link is refused.
    symlinkSync(join(work, 'elsewhere-reports'), join(work, 'reports-link'));
    const linked = teamkeys(['validate', '--source', source, '--report-dir', join(work, 'reports-link')], { cwd: work });
    expect(linked.code).toBe(1);
    expect(linked.stderr).toBe(`error: the report folder ${join(work, 'reports-link')} is a symbolic link: give the real folder\n`);
    expect(existsSync(join(work, 'elsewhere-reports'))).toBe(false);
    // apply --plan of a path that is another file: refused without quoting it.
    symlinkSync(victim, join(work, 'not-a-plan.json'));
    const applied = teamkeys(['apply', '--plan', join(work, 'not-a-plan.json'), '--store', db], { cwd: work });
    expect(applied.code).toBe(1);
    expect(applied.stdout).toContain('not a saved plan: the file is not JSON');
    expect(`${applied.stdout}${applied.stderr}`).not.toContain('SECRET');
  });

  it('a saved plan whose action is named ../../x (checksum recomputed) is refused whole: nothing written, no key outside --key-dir', () => {
    const db = store();
    const plan = join(work, 'plan.json');
    expect(teamkeys(['plan', '--source', source, '--source-id', 'keys-test', '--store', db, '--out', plan], { cwd: work }).code).toBe(0);
    const saved = JSON.parse(readFileSync(plan, 'utf8')) as SavedPlan;
    const action = saved.actions[0]!;
    action.name = '../../x';
    action.body!.metadata.name = '../../x';
    const { checksum: _old, ...rest } = saved;
    const forged = { ...rest, checksum: `sha256:${createHash('sha256').update(canonicalJson(rest)).digest('hex')}` };
    writeFileSync(plan, JSON.stringify(forged));
    const r = teamkeys(['apply', '--plan', plan, '--store', db, '--key-dir', keys], { cwd: work });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`${plan}:1:1: the saved plan names what no plan names, so nothing of it is used: actions[0]: name "../../x" is not a valid object name`);
    expect(existsSync(join(work, 'x.key'))).toBe(false);
    expect(readdirSync(keys)).toEqual([]);
    expect(teamkeys(['get', 'oak', '--store', db, '-o', 'name'], { cwd: work }).stdout).not.toContain('ci2');
  });
});
