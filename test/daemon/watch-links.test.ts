/**
 * Issue 42, point 8: the daemon's file watcher of a folder source follows no link and watches only
 * what the reader reads. A source holding `evil -> <a large tree outside>` must not have the daemon
 * crawl and watch that tree: counted as the inotify watches the process holds (Linux), and as runs
 * (a change out there triggers none, a change of a manifest in the source does).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, metric, startWatch, type Watcher } from './watch-process.js';

const team = (name: string) => `apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: ${name}\n`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The inotify watches a process holds, from /proc/PID/fdinfo. */
function inotifyWatches(pid: number): number {
  let n = 0;
  for (const fd of readdirSync(`/proc/${pid}/fdinfo`)) {
    const info = readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'utf8');
    n += info.split('\n').filter((l) => l.startsWith('inotify wd:')).length;
  }
  return n;
}

describe('the daemon watching a folder source with a link out of it', () => {
  let top: string;
  let source: string;
  let outside: string;
  let w: Watcher;
  const runs = async () => {
    const text = await (await fetch(`${w.url}/metrics`)).text();
    return ['clean', 'changes', 'drifted', 'applied', 'failed', 'refused', 'invalid', 'error'].reduce((n, r) => n + (metric(text, `teamkeys_reconcile_total{result="${r}"}`) ?? 0), 0);
  };

  beforeAll(async () => {
    top = mkdtempSync(join(tmpdir(), 'teamkeys-watch-links-'));
    source = join(top, 'source');
    outside = join(top, 'outside');
    mkdirSync(join(source, 'teams'), { recursive: true });
    writeFileSync(join(source, 'teams/platform.yaml'), team('platform'));
    // A tree outside the source, as /usr is: 200 folders.
    for (let i = 0; i < 200; i++) mkdirSync(join(outside, `d${i}`), { recursive: true });
    symlinkSync(outside, join(source, 'evil'));
    w = await startWatch(['--source', source, '--source-id', 'links', '--interval', '1h', '--log-level', 'debug', '--log-format', 'json', '--store', `sqlite:${join(top, 'db')}`, '--encryption-key-file', join(top, 'enc.yaml')]);
    // The reader refuses the link (an error at evil), so the first run is invalid: it has run all the same.
    await eventually('the first run is done', async () => (await runs()) >= 1);
  });
  afterAll(async () => {
    await w?.stop();
    rmSync(top, { recursive: true, force: true });
  });

  it('watches the source, not the tree a link in it points to', () => {
    // The source's folders (source, teams) and a few of the process's own; the tree outside has 201.
    expect(inotifyWatches(w.process.pid!)).toBeLessThan(20);
  });

  it('a change out there triggers no run; a manifest changed in the source does', async () => {
    // Runs also come from the retries of the invalid source: the log says which a file change started.
    const fileTriggers = () => w.stderr().split('\n').filter((l) => l.includes('"reason":"source files changed"')).length;
    // The file watcher scans the source after the first run has begun: a manifest written into it
    // first shows that it watches (on a loaded machine the scan can take seconds), then the count.
    writeFileSync(join(source, 'teams/probe.yaml'), team('probe'));
    await eventually('a manifest written into the source triggered a run', () => fileTriggers() >= 1, 60_000);
    const before = fileTriggers();
    writeFileSync(join(outside, 'd7', 'team.yaml'), team('elsewhere'));
    writeFileSync(join(source, 'notes.txt'), 'not a manifest\n');
    await sleep(2000);
    expect(fileTriggers()).toBe(before);
    writeFileSync(join(source, 'teams/payments.yaml'), team('payments'));
    // At least one: a file written in two steps (created, then filled) may be seen as two changes.
    await eventually('the change in the source triggered a run', () => fileTriggers() > before);
  });
});
