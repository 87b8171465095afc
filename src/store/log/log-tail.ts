/**
 * Watch fan-out shared by every backend: one reader follows the log (woken by local writes, and
 * polling for other processes' writes, as kine does) and hands each record to every watcher it
 * concerns. A watcher starting in the past catches up first (log-catch-up.ts); records are decoded
 * once for all watchers (log-record.ts); pages are read as log-source.ts trusts them; what was
 * read is kept in a span (log-span.ts).
 */
import { StorageError, expired, isStorageError } from '../errors.js';
import { silentLog, type LogRecord, type StoreEvent, type StoreLog, type StoreWatch, type StoredObject } from '../types.js';
import { WatchQueue } from '../watch-queue.js';
import { catchUp, deliver, type CatchUpTail, type Subscriber } from './log-catch-up.js';
import { pageSize, readComplete, type LogSource } from './log-source.js';
import { appendRecord, rewriteWindow, spanFrom, type Span } from './log-span.js';

export interface LogTailOptions {
  /** How often to look for writes made by other processes; 0 when this process is the only writer. */
  pollIntervalMs: number;
  windowSize?: number;
  maxPendingPerWatcher?: number;
  log?: StoreLog;
}

/**
 * The tail's state; `enter` moves it, and nothing else. Invariants:
 * - Idle: no subscriber, no timer. `span` is stale: the next subscriber replaces it.
 * - Following: one subscriber at least; the last read of the log succeeded (or none was made yet).
 *   Once `span.checked`, `span.head` is at most the store's current revision.
 * - Failing: as Following, but reads fail with Unreachable, since `since` (a warning at most every
 *   30 s, the last at `warned`). The watches stay open and resume from `span.head`, so none misses
 *   an event or sees one twice; retried at the next poll, or every second without a poll timer.
 * - Stopped: closed with its store; every watch was ended. Final.
 * Expired (history the tail had not read was compacted) and a broken read (any other error) are
 * not states: every watch fails with the error, the last one leaving makes the tail Idle.
 */
type TailState =
  | { name: 'Idle' }
  | { name: 'Following' }
  | { name: 'Failing'; since: number; warned: number }
  | { name: 'Stopped' };

/** While the log cannot be read, it is tried again this often (a polling store also tries at each poll). */
const retryMs = 1000;
/** How often a store polled on a timer is asked whether its revision went back (wentBack). */
const rewindCheckMs = 10_000;
/** While reads keep failing, a warning at most this often. */
const warnEveryMs = 30_000;

export class LogTail {
  private state: TailState = { name: 'Idle' };
  private span: Span = { head: 0, windowStart: 0, window: [], chars: 0, checked: true };
  private readonly subs = new Set<Subscriber>();
  /** When a poll last asked whether the store's revision went back (wentBack). */
  private lastRewindCheck = 0;
  /** A poll is running; `pollAgain`: another was asked for meanwhile (polls run one at a time). */
  private polling = false;
  private pollAgain = false;
  private timer: NodeJS.Timeout | undefined;
  private retry: NodeJS.Timeout | undefined;
  private readonly windowSize: number;
  private readonly maxPending: number;
  private readonly log: StoreLog;
  /** What a subscriber catching up sees of this tail. */
  private readonly catchingUp: CatchUpTail;

  constructor(
    private readonly source: LogSource,
    private readonly opts: LogTailOptions,
  ) {
    this.windowSize = opts.windowSize ?? 4096;
    this.maxPending = opts.maxPendingPerWatcher ?? 10_000;
    this.log = opts.log ?? silentLog;
    this.catchingUp = {
      source,
      span: () => this.span,
      following: () => this.following(),
      readFailed: (err) => this.readFailed(err),
      poll: () => void this.poll(),
      retryMs,
    };
  }

  /** A write happened in this process: deliver it without waiting for the next poll. */
  notify(): void {
    if (this.following()) void this.poll();
  }

  watch<T extends StoredObject>(prefix: string, fromRevision: number): StoreWatch<T> {
    const sub: Subscriber = {
      prefix,
      cursor: fromRevision,
      live: false,
      queue: new WatchQueue<StoreEvent>(this.maxPending, () => this.unsubscribe(sub)),
    };
    if (this.state.name === 'Stopped') throw new StorageError('Closed', prefix, 'the store is closed');
    if (this.state.name === 'Idle') {
      // Nobody was following the log: start following it from here (no further than the store's
      // current revision, which the next poll checks before it reads).
      this.span = spanFrom(fromRevision);
      this.enter({ name: 'Following' });
    }
    this.subs.add(sub);
    const started = this.start(sub);
    // Whoever does not look at `started` hears of a failure from the iteration instead.
    started.catch(() => {});
    const queue = sub.queue as unknown as WatchQueue<StoreEvent<T>>;
    return {
      stop: () => queue.end(),
      progress: () => sub.cursor,
      started,
      [Symbol.asyncIterator]: () => queue[Symbol.asyncIterator](),
    };
  }

  /** The store rewrote the key's history (scrubHistory): so does the window a watch may replay from. */
  rewrite(key: string, rewrite: (value: string) => string): void {
    rewriteWindow(this.span, key, rewrite);
  }

  /** Ends every watch, as when the store closes. */
  close(): void {
    this.enter({ name: 'Stopped' });
    for (const sub of [...this.subs]) sub.queue.end();
  }

  /** Resolves once the start revision is known to be in history; the catch-up continues after. */
  private async start(sub: Subscriber): Promise<void> {
    try {
      const compacted = await this.source.compactedRevision();
      if (sub.cursor < compacted) throw expired(sub.prefix, sub.cursor, compacted);
    } catch (err) {
      sub.queue.fail(err);
      throw err;
    }
    void catchUp(sub, this.catchingUp);
  }

  private async poll(): Promise<void> {
    if (!this.following()) return;
    if (this.polling) {
      this.pollAgain = true;
      return;
    }
    this.polling = true;
    try {
      do {
        this.pollAgain = false;
        for (;;) {
          const span = this.span;
          if (!span.checked) {
            // A watch from a revision the store has not reached waits for it (its cursor skips
            // what comes before); the tail, shared by every watcher, follows from the current one.
            const current = await this.source.currentRevision();
            if (span !== this.span) continue;
            // Nothing was appended since the restart (polls run one at a time): the window is empty.
            if (span.head > current) span.head = span.windowStart = current;
            span.checked = true;
          }
          const records = await readComplete(this.source, '/', span.head);
          // The tail was started afresh meanwhile (its last watcher left, a new one came): these
          // records were read from the old head; read again from the new one.
          if (span !== this.span) continue;
          if (records.length === 0 && (await this.wentBack(span))) return;
          for (const r of records) this.append(r);
          if (records.length < pageSize) break;
        }
      } while (this.pollAgain && this.following());
      if (this.state.name === 'Failing') this.enter({ name: 'Following' });
    } catch (err) {
      if (isStorageError(err, 'Expired')) this.expireAll(err);
      else this.readFailed(err);
    } finally {
      this.polling = false;
    }
  }

  /**
   * Whether the store's revision is now below what this tail read (a restored backup, a failover to
   * a replica behind): its new writes take revisions the tail has passed, so it would never read
   * them, and every watcher (the watch cache among them) would go on with a timeline that no longer
   * exists. Asked when a read finds nothing new, so it costs a read of the revision only then.
   * Every watch ends with 410 and its owner lists again (found by a review). Read twice: once could
   * be a read of an older snapshot than the log's.
   */
  private async wentBack(span: Span): Promise<boolean> {
    // A store polled on a timer (PostgreSQL: every second, nearly always finding nothing) is asked
    // at most every rewindCheckMs, not on every idle poll (a review of this check counted it
    // doubling an idle replica's queries); a store this process alone writes, on each empty read.
    if (this.opts.pollIntervalMs > 0) {
      const now = Date.now();
      if (now - this.lastRewindCheck < rewindCheckMs) return false;
      this.lastRewindCheck = now;
    }
    for (let look = 0; look < 2; look++) {
      const current = await this.source.currentRevision();
      if (span !== this.span || current >= span.head) return false;
      if (look === 1) {
        this.expireAll(new StorageError('Expired', '/', `the store's revision went back from ${span.head} to ${current} (restored from a backup, or failed over to a replica behind it): list again`));
      }
    }
    return true;
  }

  /** History this tail had not read is gone, or the store went back: every watch ends with 410, and its owner lists again. */
  private expireAll(err: unknown): void {
    this.log.warn({ err }, 'history the watchers had not read is gone (compacted, or the store went back); ending every watch (they list again)');
    for (const sub of [...this.subs]) sub.queue.fail(err);
  }

  /**
   * Storage out of reach: the watches stay open and resume from the last revision delivered once
   * the log can be read again, so none misses an event or sees one twice (see docs/reliability.md).
   * Any other failure is a bug: every watch ends with it, and it is logged.
   */
  private readFailed(err: unknown): void {
    if (!isStorageError(err, 'Unreachable')) {
      this.log.error({ err }, 'reading the log for watchers failed; ending every watch');
      for (const sub of [...this.subs]) sub.queue.fail(err);
      return;
    }
    if (this.following()) this.enter({ name: 'Failing', since: Date.now(), warned: 0 }, err);
  }

  /**
   * The one place the state changes, with what goes with each change: the poll timer runs while
   * Following or Failing; Failing warns at most every 30 s and, without a poll timer, retries;
   * leaving Failing for Following says how long reads failed.
   */
  private enter(next: TailState, err?: unknown): void {
    const prev = this.state;
    if (next.name === 'Failing' && prev.name === 'Failing') next = prev;
    this.state = next;
    if (next.name === 'Idle' || next.name === 'Stopped') {
      this.stopTimer();
      return;
    }
    this.startTimer();
    if (next.name === 'Following') {
      if (prev.name === 'Failing') this.log.info({ failedForMs: Date.now() - prev.since }, 'reading the log for watchers again');
      return;
    }
    const now = Date.now();
    if (now - next.warned >= warnEveryMs) {
      next.warned = now;
      this.log.warn({ err, failingForMs: now - next.since, watchers: this.subs.size }, 'cannot read the log for watchers; watches stay open and resume when storage is back');
    }
    if (this.opts.pollIntervalMs > 0 || this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      void this.poll();
    }, retryMs);
    this.retry.unref();
  }

  /** Whether the tail follows the log for someone (Following or Failing). */
  private following(): boolean {
    return this.state.name === 'Following' || this.state.name === 'Failing';
  }

  private append(r: LogRecord): void {
    if (!appendRecord(this.span, r, this.windowSize)) return;
    for (const sub of this.subs) if (sub.live) deliver(sub, r);
  }

  private unsubscribe(sub: Subscriber): void {
    this.subs.delete(sub);
    if (this.subs.size === 0 && this.following()) this.enter({ name: 'Idle' });
  }

  private startTimer(): void {
    if (this.timer || this.opts.pollIntervalMs <= 0) return;
    this.timer = setInterval(() => void this.poll(), this.opts.pollIntervalMs);
    this.timer.unref();
  }

  private stopTimer(): void {
    if (this.timer) clearInterval(this.timer);
    if (this.retry) clearTimeout(this.retry);
    this.timer = this.retry = undefined;
  }
}
