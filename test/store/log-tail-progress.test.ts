/**
 * A watch's progress is a promise to informers (the team index counts it as "seen"): every event up
 * to it reaches the iteration. An event the watcher's full queue refused must not be counted.
 */
import { describe, expect, it } from 'vitest';
import { isStorageError } from '../../src/store/errors.js';
import { LogTail } from '../../src/store/log/log-tail.js';
import type { LogRecord, StoreEvent } from '../../src/store/types.js';
import { memoryLog } from './memory-log.js';

const record = (revision: number, key: string): LogRecord => ({ revision, key, type: 'ADDED', value: JSON.stringify({ metadata: { name: key.split('/').pop() } }) });

describe('log tail progress', () => {
  it('moves past writes to other prefixes and delivered events, never past an event the queue refused; the iteration ends after everything up to it', async () => {
    const { records, source } = memoryLog();
    const tail = new LogTail(source, { pollIntervalMs: 0, maxPendingPerWatcher: 2 });
    const watch = tail.watch('/teams/', 0);
    await watch.started;

    records.push(record(1, '/ownedaccesskeys/k1'));
    tail.notify();
    await new Promise((r) => setTimeout(r, 20));
    expect(watch.progress()).toBe(1); // examined, though not a team

    // Nobody reads the watch: two team events fit, the third overflows it.
    records.push(record(2, '/teams/a'), record(3, '/teams/b'), record(4, '/teams/c'), record(5, '/ownedaccesskeys/k2'));
    tail.notify();
    await new Promise((r) => setTimeout(r, 20));
    expect(watch.progress()).toBe(3);

    const seen: StoreEvent[] = [];
    let failure: unknown;
    try {
      for await (const e of watch) seen.push(e);
    } catch (err) {
      failure = err;
    }
    expect(seen.map((e) => e.revision)).toEqual([2, 3]);
    expect(isStorageError(failure, 'WatchOverflow')).toBe(true);
    tail.close();
  });
});
