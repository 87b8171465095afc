/**
 * A source with more problems than V8 passes as arguments (about 120,000): lists that grow with a
 * source's content are appended without spreading (gitops/append.ts). Found by a review (stop 65):
 * 200,000 empty documents crashed `validate` with "Maximum call stack size exceeded" and no
 * file:line:col, and the Markdown report the Action writes crashed likewise.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { bin } from '../support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'teamkeys-many-problems-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a source of 180,000 problems', () => {
  it('validate names each at file:line:col and writes its reports', () => {
    // 45,000 empty documents a file (under the YAML reader's node bound), four files.
    for (const f of ['a', 'b', 'c', 'd']) writeFileSync(join(dir, `${f}.yaml`), '---\n'.repeat(45_000));
    const r = spawnSync(process.execPath, [bin, 'validate', '--source', dir, '--report-dir', join(dir, 'report')], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, timeout: 50_000, env: { ...process.env, TEAMKEYS_STORE: '' } });
    expect(r.error).toBeUndefined();
    expect(r.stderr).not.toMatch(/Maximum call stack|unexpected/);
    expect(r.status).toBe(1);
    const lines = r.stdout.split('\n').filter((l) => /^[abcd]\.yaml:\d+:\d+: /.test(l));
    expect(lines.length).toBe(180_000);
    expect(lines[0]).toMatch(/^a\.yaml:1:4: a manifest must be a mapping/);
    expect(existsSync(join(dir, 'report/report.md'))).toBe(true);
    expect(readFileSync(join(dir, 'report/report.json'), 'utf8')).toContain('"errors"');
  }, 60_000);
});
