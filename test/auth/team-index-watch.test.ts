/**
 * The team index may decide a request only once it holds every Team change up to the store's
 * revision (caughtUp). These are the ways its watch could claim more than it delivered, found by an
 * adversarial review: each test drives the real TeamIndex over the real LogTail, with the log kept
 * in memory and compacted as the backends compact it, and failed before its fix.
 */
import { describe, expect, it } from 'vitest';
import { TeamIndex } from '../../src/auth/team-index.js';
import { LogTail } from '../../src/store/log/log-tail.js';
import type { LogRecord } from '../../src/store/types.js';
import type { ResourceRegistry } from '../../src/registry/resource-registry.js';
import type { Logger } from 'pino';
import { memoryLog } from '../store/memory-log.js';

const team = (name: string, users: string[]) => JSON.stringify({ apiVersion: 'management.service/v1', kind: 'Team', metadata: { name }, spec: { users } });
const key = (name: string) => JSON.stringify({ metadata: { name } });
const rec = (revision: number, key: string, type: LogRecord['type'], value: string): LogRecord => ({ revision, key, type, value });
const quiet = { warn() {}, info() {}, error() {}, debug() {} } as unknown as Logger;
const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A log, a tail over it, and the three calls the index makes of its registry. */
function world(opts: { maxPending?: number; windowSize?: number; firstListAt?: number; relistAfterMs?: number } = {}) {
  const { records: log, source, compact, setUnreachable } = memoryLog();
  let lists = 0;
  const tail = new LogTail(source, { pollIntervalMs: 0, maxPendingPerWatcher: opts.maxPending ?? 10_000, windowSize: opts.windowSize ?? 4096 });
  const current = () => log.at(-1)?.revision ?? 0;
  const registry = {
    currentRevision: async () => current(),
    informerWatch: (from: number) => tail.watch('/teams/', from),
    informerPage: async () => {
      const at = lists++ === 0 && opts.firstListAt !== undefined ? opts.firstListAt : current();
      const live = new Map<string, LogRecord>();
      for (const r of log) if (r.revision <= at && r.key.startsWith('/teams/')) (r.type === 'DELETED' ? live.delete(r.key) : live.set(r.key, r));
      return { items: [...live.values()].map((r) => JSON.parse(r.value) as unknown), revision: at };
    },
  };
  const index = new TeamIndex(registry as unknown as ResourceRegistry, quiet, opts.relistAfterMs ?? 10);
  return {
    log,
    tail,
    index,
    write(r: LogRecord) {
      log.push(r);
      tail.notify();
    },
    compact,
    setUnreachable,
    stop() {
      index.stop();
      tail.close();
    },
  };
}

describe('team index over a watch that falls behind', () => {
  it('a team change its full queue refused during catch-up is not counted as seen: no decision until a relist (503 after 5 s)', async () => {
    // The first list lags (revision 0) and the window is too short to replay: the index's watch
    // catches up from the log, and its queue (2 events) overflows on mallory's removal. Its relist
    // is held back past the test, so nothing but the watch could make the index current.
    const w = world({ maxPending: 2, windowSize: 1, firstListAt: 0, relistAfterMs: 60_000 });
    const other = w.tail.watch('/', 0); // another watcher (the cache) keeps the window moving
    void (async () => {
      for await (const _ of other) void _;
    })().catch(() => {});
    for (const r of [
      rec(1, '/teams/t', 'ADDED', team('t', ['mallory'])),
      rec(2, '/teams/u', 'ADDED', team('u', [])),
      rec(3, '/teams/v', 'ADDED', team('v', [])),
      rec(4, '/teams/t', 'MODIFIED', team('t', [])), // mallory removed
      rec(5, '/ownedaccesskeys/k', 'ADDED', key('k')),
      rec(6, '/ownedaccesskeys/k2', 'ADDED', key('k2')),
    ]) {
      w.write(r);
      await tick(5);
    }
    await w.index.start();
    await tick(20);
    // Revision 6 is not vouched for: mallory's removal (4) never reached the snapshot.
    await expect(w.index.caughtUp()).rejects.toMatchObject({ code: 503, message: 'the team index is behind the store; try again' });
    expect(w.index.teamsOf('mallory', [])).toEqual(['t']); // what it holds, which nothing may be decided on
    w.stop();
  }, 15_000);

  it('history compacted while the log could not be read: the tail ends its watches (410) and the index lists again, so a deleted team is gone', async () => {
    const w = world();
    w.write(rec(1, '/teams/t', 'ADDED', team('t', ['mallory'])));
    await w.index.start();
    await tick(10);
    // This replica cannot read the log; others delete the team, write on, and compact past it.
    w.setUnreachable(true);
    w.write(rec(2, '/teams/t', 'DELETED', team('t', ['mallory'])));
    for (let r = 3; r <= 20; r++) w.write(rec(r, `/ownedaccesskeys/k${r}`, 'ADDED', key(`k${r}`)));
    await tick(10);
    w.compact(10);
    w.setUnreachable(false);
    w.tail.notify();
    await tick(20);
    await w.index.caughtUp(); // up to revision 20
    expect(w.index.get('t')).toBeUndefined();
    expect(w.index.teamsOf('mallory', [])).toEqual([]);
    w.stop();
  });

  it('a watcher started afresh while an older read of the log is in flight misses nothing', async () => {
    // The read begun for the old head (slow) finishes after the last watcher left and a new one
    // started further back: its records must not move the new head past the ones in between.
    const log: LogRecord[] = [];
    let release: () => void = () => {};
    let slow = false;
    const source = {
      readSince: async (after: number, limit: number) => {
        const out = log.filter((r) => r.revision > after).slice(0, limit);
        if (slow) await new Promise<void>((r) => (release = r));
        return out;
      },
      compactedRevision: () => 0,
      currentRevision: () => log.reduce((m, r) => Math.max(m, r.revision), 0),
    };
    const tail = new LogTail(source, { pollIntervalMs: 0 });
    const first = tail.watch('/', 0);
    await first.started;
    for (let r = 1; r <= 3; r++) log.push(rec(r, `/teams/a${r}`, 'ADDED', team(`a${r}`, [])));
    tail.notify();
    await tick(10); // the tail's head is at 3
    for (let r = 4; r <= 5; r++) log.push(rec(r, `/teams/a${r}`, 'ADDED', team(`a${r}`, [])));
    slow = true;
    tail.notify(); // a read from head 3 is now in flight
    await tick(5);
    first.stop();
    slow = false;
    const second = tail.watch('/', 1); // nobody else watches: the window starts afresh at 1
    release();
    await tick(20);
    const seen: number[] = [];
    const it = second[Symbol.asyncIterator]();
    for (;;) {
      const next = await Promise.race([it.next(), tick(100).then(() => undefined)]);
      if (!next || next.done) break;
      seen.push(next.value.revision);
    }
    expect(seen).toEqual([2, 3, 4, 5]);
    tail.close();
  });
});
