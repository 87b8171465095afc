/**
 * Issue 42, point 7: a link planted as any folder on the way (not only the last one), committed in
 * a pull request's checkout, sends no report, saved plan or key outside it, and removes nothing
 * there. Real folders and links, the built CLI, the embedded store; the checkout is the working directory.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { teamkeys } from '../support/cli.js';

const key = (name: string) => `apiVersion: management.service/v1\nkind: OwnedAccessKey\nmetadata:\n  name: ${name}\nspec:\n  user: ana\n  type: User\n`;

describe('a linked parent folder in the checkout', () => {
  let top: string;
  let work: string;
  let outside: string;
  let n = 0;
  const store = () => `sqlite:${join(top, `store-${++n}.db`)}`;
  const run = (args: string[]) => teamkeys(args, { cwd: work });

  beforeAll(() => {
    top = mkdtempSync(join(tmpdir(), 'teamkeys-linked-parents-'));
    work = join(top, 'checkout');
    outside = join(top, 'outside');
    mkdirSync(join(work, 'source'), { recursive: true });
    mkdirSync(outside);
    writeFileSync(join(work, 'source/ci.yaml'), key('ci'));
    // What the pull request committed: a folder that is a link to outside the checkout.
    symlinkSync(outside, join(work, 'out'));
    mkdirSync(join(work, 'kd'));
    symlinkSync(outside, join(work, 'kd/keys'));
  });
  afterAll(() => rmSync(top, { recursive: true, force: true }));

  it('report-dir below a linked folder is refused and nothing is written outside', () => {
    const r = run(['validate', '--source', 'source', '--report-dir', 'out/reports']);
    expect(r.stderr).toBe('error: the report folder out/reports is reached through a symbolic link, ' + join(work, 'out') + ': give a path with no link on it\n');
    expect(r.code).toBe(1);
    expect(readdirSync(outside)).toEqual([]);
  });

  it('plan --out below a linked folder is refused, and a plan not saved removes nothing outside', () => {
    const saved = run(['plan', '--source', 'source', '--source-id', 'linked', '--store', store(), '--out', 'out/plans/plan.json']);
    expect(`${saved.stdout}${saved.stderr}`).toContain(`is reached through a symbolic link, ${join(work, 'out')}`);
    expect(saved.code).not.toBe(0);
    expect(readdirSync(outside)).toEqual([]);
    // A plan with errors is not saved, and the file of an earlier run is removed: not through the link.
    writeFileSync(join(outside, 'plan.json'), 'kept\n');
    writeFileSync(join(work, 'source/bad.yaml'), 'apiVersion: management.service/v1\nkind: Nope\nmetadata:\n  name: x\n');
    try {
      const failed = run(['plan', '--source', 'source', '--source-id', 'linked', '--store', store(), '--out', 'out/plan.json']);
      expect(failed.code).not.toBe(0);
      expect(failed.stderr).toContain(`error: out/plan.json: the folder out is a symbolic link: give the real folder`);
      expect(readdirSync(outside)).toEqual(['plan.json']);
    } finally {
      rmSync(join(work, 'source/bad.yaml'));
      rmSync(join(outside, 'plan.json'));
    }
  });

  it('--key-dir kd/keys/ci with kd/keys a link: the key is not made, and nothing lands outside', () => {
    const db = store();
    const r = run(['apply', '--source', 'source', '--source-id', 'linked', '--store', db, '--key-dir', 'kd/keys/ci']);
    expect(r.stdout).toContain(`the key folder kd/keys/ci is reached through a symbolic link, ${join(work, 'kd/keys')}: give a path with no link on it`);
    expect(r.code).toBe(1);
    expect(readdirSync(outside)).toEqual([]);
    expect(existsSync(join(outside, 'ci'))).toBe(false);
    expect(run(['get', 'oak', '--store', db, '-o', 'name']).stdout).not.toContain('ci');
  });
});
