/**
 * A watch still catching up from the log (its start is older than the tail's window) when storage
 * goes out of reach stays open, as a live watch does, and resumes from its cursor once storage is
 * back: nothing missed, nothing twice (docs/watch.md, section 2; it used to end with Unreachable).
 */
import { describe, expect, it } from 'vitest';
import { LogTail } from '../../src/store/log/log-tail.js';
import type { LogRecord, StoreEvent } from '../../src/store/types.js';
import { memoryLog } from './memory-log.js';

const record = (revision: number): LogRecord => ({ revision, key: `/k/${revision}`, type: 'ADDED', value: JSON.stringify({ metadata: { name: String(revision) } }) });

describe('log tail catch-up during an outage', () => {
  it('keeps a catching-up watch open while the log cannot be read, then delivers every record once', async () => {
    const log = memoryLog();
    for (let r = 1; r <= 10; r++) log.records.push(record(r));
    const tail = new LogTail(log.source, { pollIntervalMs: 0, windowSize: 2 });
    try {
      // The tail follows from 10: a watch from 0 must read 1..10 from the log itself.
      const live = tail.watch('/', 10);
      await live.started;
      log.setUnreachable(true);
      const late = tail.watch('/', 0);
      await late.started;
      const got: StoreEvent[] = [];
      let failure: unknown;
      const reading = (async () => {
        try {
          for await (const e of late) got.push(e);
        } catch (err) {
          failure = err;
        }
      })();
      await new Promise((r) => setTimeout(r, 100));
      expect(failure).toBeUndefined();
      expect(got).toEqual([]);

      log.setUnreachable(false);
      log.records.push(record(11));
      tail.notify();
      for (let i = 0; i < 300 && got.length < 11; i++) await new Promise((r) => setTimeout(r, 10));
      expect(failure).toBeUndefined();
      expect(got.map((e) => e.revision)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
      expect(late.progress()).toBe(11);
      late.stop();
      live.stop();
      await reading;
    } finally {
      tail.close();
    }
  });
});
