/**
 * One watcher of the log tail (a subscriber) and how it catches up: a watch starting in the past
 * replays from the tail's window of recent records, or reads the log itself while it starts
 * further back than the window reaches, then goes live and takes records as the tail reads them.
 */
import { isStorageError } from '../errors.js';
import type { LogRecord, StoreEvent } from '../types.js';
import { pendingWeight, type WatchQueue } from '../watch-queue.js';
import { eventOf } from './log-record.js';
import { charsOf } from './log-span.js';
import { pageSize, readComplete, type LogSource } from './log-source.js';

/**
 * States: Starting (`LogTail.start`: the compaction check) -> Catching up (`live` false) -> Live
 * -> Ended (its queue closed). Invariant: every record up to `cursor` was examined and, when in
 * `prefix`, queued; nothing is queued twice or out of revision order.
 */
export interface Subscriber {
  prefix: string;
  cursor: number;
  live: boolean;
  queue: WatchQueue<StoreEvent>;
}

/** What catching up needs of the tail: its window as it is now, and how it handles a failed read. */
export interface CatchUpTail {
  source: LogSource;
  /** Every record above `windowStart` is in `window` (LogTail's Span, which a restart replaces). */
  span(): { windowStart: number; window: LogRecord[]; chars: number };
  /** Whether the tail still follows the log (Following or Failing). */
  following(): boolean;
  /** A read failed with Unreachable: the tail enters Failing (and warns). */
  readFailed(err: unknown): void;
  /** The subscriber went live: the tail reads what was written meanwhile. */
  poll(): void;
  /** How long to wait before reading again while the log cannot be read. */
  retryMs: number;
}

/** Hands a record to a subscriber, unless it already has it or its queue is closed. */
export function deliver(sub: Subscriber, r: LogRecord): void {
  // A closed queue takes nothing more, and its cursor stays where its last event was.
  if (r.revision <= sub.cursor || sub.queue.closed) return;
  // The cursor (the watch's progress) moves only past what was handed over: an event the queue
  // refused (overflow) is not "examined", or an informer could count it as seen.
  if (r.key.startsWith(sub.prefix) && !sub.queue.push(eventOf(r), charsOf(r))) return;
  sub.cursor = r.revision;
}

/**
 * Reads the log from the subscriber's cursor while the window does not reach back that far, then
 * delivers the window and marks it live, synchronously, so no record falls between the two.
 */
export async function catchUp(sub: Subscriber, tail: CatchUpTail): Promise<void> {
  for (;;) {
    try {
      // History is fed as the watcher takes it, a page at a time: a catch-up longer than the queue
      // (a resourceVersion 20,000 events back) is not a watcher falling behind, and must not
      // overflow it before the watcher could read anything.
      const { queue } = sub;
      for (;;) {
        if (queue.closed) return;
        if (sub.cursor < tail.span().windowStart) {
          // By weight too: a page is up to 1,000 records of any size, taken by a reader in one turn.
          await queue.room(Math.max(0, queue.maxPending - pageSize), pendingWeight.max / 2);
          if (queue.closed) return;
          const records = await readComplete(tail.source, sub.prefix, sub.cursor);
          if (records.length > 0) {
            for (const r of records) deliver(sub, r);
            continue;
          }
        }
        // The window goes out in one turn with the switch to live; wait until the queue holds it.
        const { window, chars } = tail.span();
        const level = Math.max(0, queue.maxPending - window.length);
        const weightLevel = Math.max(0, pendingWeight.max - chars);
        if (!queue.hasRoom(level, weightLevel)) {
          await queue.room(level, weightLevel);
          continue;
        }
        break;
      }
      for (const r of tail.span().window) deliver(sub, r);
      sub.live = true;
      tail.poll();
      return;
    } catch (err) {
      // Storage out of reach: this watch stays open, as live ones do (Failing), and goes on
      // catching up from its cursor once the log can be read again. Anything else ends it.
      if (!isStorageError(err, 'Unreachable') || sub.queue.closed || !tail.following()) {
        sub.queue.fail(err);
        return;
      }
      tail.readFailed(err);
      await new Promise((r) => setTimeout(r, tail.retryMs).unref());
    }
  }
}
