/**
 * The one report writer (CLI --report-dir, the Action's report-dir, the daemon's every cycle):
 * a reader polling report.json while reports are rewritten never reads half of one, and a link
 * planted at the report's place is replaced, not written through.
 */
import { spawn } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildReport, type Report } from '../../src/gitops/report/report.js';
import { reportJson, writeReports } from '../../src/gitops/report/write.js';

/** A report large enough (about 1 MB) that writing it in place takes several writes. */
function bigReport(n: number): Report {
  const errors = Array.from({ length: 4000 }, (_, i) => ({ file: `teams/team-${i}.yaml`, line: i + 1, column: 1, message: `error ${n}: ${'x'.repeat(200)}` }));
  return buildReport({ mode: 'validate', source: { id: 'write-test', description: 'test' }, target: 'nowhere', errors, now: new Date(1_700_000_000_000 + n * 1000) });
}

/** Reads `file` in a loop in another process until `stop` exists: how many reads, and how many were not whole JSON. */
const reader = `
const fs = require('node:fs');
const [file, stop] = process.argv.slice(1);
let reads = 0, torn = 0;
while (!fs.existsSync(stop)) {
  let text;
  try { text = fs.readFileSync(file, 'utf8'); } catch { continue; }
  reads++;
  try { JSON.parse(text); } catch { torn++; }
}
process.stdout.write(JSON.stringify({ reads, torn }));
`;

describe('writeReports', () => {
  let work: string;
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'teamkeys-report-write-'));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('a reader polling report.json never sees half a report', async () => {
    const dir = join(work, 'polled');
    await writeReports(bigReport(0), dir);
    const stop = join(work, 'stop');
    const child = spawn(process.execPath, ['-e', reader, join(dir, 'report.json'), stop], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<void>((done) => child.on('exit', () => done()));
    let last = bigReport(0);
    for (let n = 1; n <= 25; n++) {
      last = bigReport(n);
      await writeReports(last, dir);
    }
    writeFileSync(stop, '');
    await exited;
    const { reads, torn } = JSON.parse(out) as { reads: number; torn: number };
    expect(reads).toBeGreaterThan(0);
    expect(torn).toBe(0);
    expect(readFileSync(join(dir, 'report.json'), 'utf8')).toBe(reportJson(last));
    // Nothing is left aside.
    expect(readdirSync(dir).sort()).toEqual(['report.json', 'report.md']);
  }, 30_000);

  it('a link at report.json or report.md is replaced by the report, and what it named is untouched', async () => {
    const dir = join(work, 'linked');
    mkdirSync(dir);
    const victim = join(work, 'victim.txt');
    writeFileSync(victim, 'keep me\n');
    symlinkSync(victim, join(dir, 'report.json'));
    symlinkSync(victim, join(dir, 'report.md'));
    await writeReports(bigReport(1), dir);
    expect(readFileSync(victim, 'utf8')).toBe('keep me\n');
    for (const name of ['report.json', 'report.md']) expect(lstatSync(join(dir, name)).isFile()).toBe(true);
    expect(JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8'))).toMatchObject({ kind: 'Report', source: { id: 'write-test' } });
  });

  it('a report folder that is itself a link is refused', async () => {
    const elsewhere = join(work, 'elsewhere');
    symlinkSync(elsewhere, join(work, 'folder-link'));
    await expect(writeReports(bigReport(1), join(work, 'folder-link'))).rejects.toThrow(/is a symbolic link/);
    expect(() => lstatSync(elsewhere)).toThrow();
  });
});
