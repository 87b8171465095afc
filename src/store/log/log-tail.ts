/**
 * Watch fan-out shared by every backend: one reader follows the log (woken by local writes, and
 * polling for other processes' writes, as kine does) and hands each record to every watcher it
 * concerns. A watcher starting in the past replays from a window of recent records, or from the
 * log itself when it starts further back.
 */
import { expired, isStorageError } from '../errors.js';
import { silentLog, type LogRecord, type StoreEvent, type StoreLog, type StoreWatch, type StoredObject } from '../types.js';
import { WatchQueue } from '../watch-queue.js';

export interface LogSource {
  /** Records with revision > after, ascending, at most limit. */
  readSince(after: number, limit: number): LogRecord[] | Promise<LogRecord[]>;
  compactedRevision(): number | Promise<number>;
  /** The last revision written: a watch may ask for a later one, the tail must not follow from there. */
  currentRevision(): number | Promise<number>;
}

export interface LogTailOptions {
  /** How often to look for writes made by other processes; 0 when this process is the only writer. */
  pollIntervalMs: number;
  windowSize?: number;
  maxPendingPerWatcher?: number;
  log?: StoreLog;
}

interface Subscriber {
  prefix: string;
  cursor: number;
  live: boolean;
  queue: WatchQueue<StoreEvent>;
}

const pageSize = 1000;
/** While the log cannot be read, it is tried again this often (a polling store also tries at each poll). */
const retryMs = 1000;
/** While reads keep failing, a warning at most this often. */
const warnEveryMs = 30_000;

export class LogTail {
  private head = 0;
  private window: LogRecord[] = [];
  /** Every record with a revision above this one is in the window. */
  private windowStart = 0;
  private readonly subs = new Set<Subscriber>();
  private polling = false;
  /** Moves when the window is started afresh: a read begun before belongs to the old head. */
  private epoch = 0;
  private pollAgain = false;
  /**
   * `head` was set from a new subscriber's revision, not read from the log: it may be a revision
   * the store has not reached (a watch from the future), which the next poll checks first.
   */
  private headUnchecked = false;
  private timer: NodeJS.Timeout | undefined;
  private retry: NodeJS.Timeout | undefined;
  /** Since when reads of the log have been failing (storage unreachable), and when that was last logged. */
  private failingSince: number | undefined;
  private lastWarned = 0;
  private readonly windowSize: number;
  private readonly maxPending: number;
  private readonly log: StoreLog;

  constructor(
    private readonly source: LogSource,
    private readonly opts: LogTailOptions,
  ) {
    this.windowSize = opts.windowSize ?? 4096;
    this.maxPending = opts.maxPendingPerWatcher ?? 10_000;
    this.log = opts.log ?? silentLog;
  }

  /** A write happened in this process: deliver it without waiting for the next poll. */
  notify(): void {
    if (this.subs.size > 0) void this.poll();
  }

  watch<T extends StoredObject>(prefix: string, fromRevision: number): StoreWatch<T> {
    const sub: Subscriber = {
      prefix,
      cursor: fromRevision,
      live: false,
      queue: new WatchQueue<StoreEvent>(this.maxPending, () => this.unsubscribe(sub)),
    };
    if (this.subs.size === 0) {
      // Nobody was following the log: start following it from here (no further than the store's
      // current revision, which the next poll checks before it reads).
      this.head = this.windowStart = fromRevision;
      this.headUnchecked = true;
      this.window = [];
      this.epoch++;
    }
    this.subs.add(sub);
    this.startTimer();
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

  /**
   * The store rewrote the key's history (scrubHistory): the window's copies of those rows are
   * rewritten too, or a watch replaying from the window would hand out what the log no longer
   * holds (old sealed secrets). The key's last row stays as it is when it is live, as in the log.
   */
  rewrite(key: string, rewrite: (value: string) => string): void {
    let last = -1;
    for (let i = 0; i < this.window.length; i++) if (this.window[i]!.key === key) last = i;
    for (let i = 0; i <= last; i++) {
      const r = this.window[i]!;
      if (r.key !== key) continue;
      // A new record, not an edit: the decoded event cached for the old one must not be reused.
      const keepLive = i === last && r.type !== 'DELETED';
      const next: LogRecord = { ...r, value: keepLive ? r.value : rewrite(r.value) };
      if (r.prevValue !== undefined) next.prevValue = rewrite(r.prevValue);
      this.window[i] = next;
    }
  }

  /** Ends every watch, as when the store closes. */
  close(): void {
    for (const sub of [...this.subs]) sub.queue.end();
    this.stopTimer();
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
    void this.catchUp(sub);
  }

  private async catchUp(sub: Subscriber): Promise<void> {
    try {
      // Catch up from the log itself while the window does not reach back far enough.
      while (sub.cursor < this.windowStart && !sub.queue.closed) {
        const records = await this.readComplete(sub.prefix, sub.cursor);
        if (records.length === 0) break;
        for (const r of records) this.deliver(sub, r);
      }
      for (const r of this.window) this.deliver(sub, r);
      sub.live = true;
      void this.poll();
    } catch (err) {
      sub.queue.fail(err);
    }
  }

  private deliver(sub: Subscriber, r: LogRecord): void {
    // A closed queue takes nothing more, and its cursor stays where its last event was.
    if (r.revision <= sub.cursor || sub.queue.closed) return;
    // The cursor (the watch's progress) moves only past what was handed over: an event the queue
    // refused (overflow) is not "examined", or an informer could count it as seen.
    if (r.key.startsWith(sub.prefix) && !sub.queue.push(eventOf(r))) return;
    sub.cursor = r.revision;
  }

  private async poll(): Promise<void> {
    if (this.polling) {
      this.pollAgain = true;
      return;
    }
    this.polling = true;
    try {
      do {
        this.pollAgain = false;
        for (;;) {
          const epoch = this.epoch;
          if (this.headUnchecked) {
            // A watch from a revision the store has not reached waits for it (its cursor skips
            // what comes before); the tail, shared by every watcher, follows from the current one.
            const current = await this.source.currentRevision();
            if (epoch !== this.epoch) continue;
            // Nothing was appended since the restart (polls run one at a time): the window is empty.
            if (this.head > current) this.head = this.windowStart = current;
            this.headUnchecked = false;
          }
          const records = await this.readComplete('/', this.head);
          // The window was started afresh meanwhile (its last watcher left, a new one came): these
          // records were read from the old head; read again from the new one.
          if (epoch !== this.epoch) continue;
          for (const r of records) this.append(r);
          if (records.length < pageSize) break;
        }
      } while (this.pollAgain && this.subs.size > 0);
      this.recovered();
    } catch (err) {
      if (isStorageError(err, 'Expired')) this.expireAll(err);
      else this.readFailed(err);
    } finally {
      this.polling = false;
    }
  }

  /**
   * A page of the log after `after`, or Expired when history after `after` may have been
   * compacted away (a tail that could not read the log while other replicas wrote and compacted):
   * resuming past the gap would skip a deletion, and a watcher would never learn of it. Compaction
   * is checked after the read, so a page read before a compaction that went past it is not trusted.
   */
  private async readComplete(prefix: string, after: number): Promise<LogRecord[]> {
    const records = await this.source.readSince(after, pageSize);
    const compacted = await this.source.compactedRevision();
    if (compacted > after) throw expired(prefix, after, compacted);
    return records;
  }

  /** History this tail had not read is gone: every watch ends with 410, and its owner lists again. */
  private expireAll(err: unknown): void {
    this.log.warn({ err }, 'history the watchers had not read was compacted; ending every watch (they list again)');
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
    const now = Date.now();
    this.failingSince ??= now;
    if (now - this.lastWarned >= warnEveryMs) {
      this.lastWarned = now;
      this.log.warn({ err, failingForMs: now - this.failingSince, watchers: this.subs.size }, 'cannot read the log for watchers; watches stay open and resume when storage is back');
    }
    if (this.opts.pollIntervalMs > 0 || this.retry || this.subs.size === 0) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      void this.poll();
    }, retryMs);
    this.retry.unref();
  }

  private recovered(): void {
    if (this.failingSince === undefined) return;
    this.log.info({ failedForMs: Date.now() - this.failingSince }, 'reading the log for watchers again');
    this.failingSince = undefined;
    this.lastWarned = 0;
  }

  private append(r: LogRecord): void {
    if (r.revision <= this.head) return;
    this.head = r.revision;
    this.window.push(r);
    if (this.window.length > this.windowSize) {
      const dropped = this.window.splice(0, this.window.length - this.windowSize);
      this.windowStart = dropped[dropped.length - 1]!.revision;
    }
    for (const sub of this.subs) if (sub.live) this.deliver(sub, r);
  }

  private unsubscribe(sub: Subscriber): void {
    this.subs.delete(sub);
    if (this.subs.size === 0) this.stopTimer();
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

const decoded = new WeakMap<LogRecord, StoreEvent>();

/** Decodes a record once for all its watchers: events are shared, so consumers must not mutate them. */
function eventOf(r: LogRecord): StoreEvent {
  let event = decoded.get(r);
  if (!event) {
    event = toEvent(r);
    decoded.set(r, event);
  }
  return event;
}

/** Decodes a log record into a store event; the resourceVersion is the record's revision. */
export function toEvent(r: LogRecord): StoreEvent {
  const object = withRevision(JSON.parse(r.value) as StoredObject, r.revision);
  const event: StoreEvent = { type: r.type, key: r.key, revision: r.revision, object };
  if (r.prevValue !== undefined && r.prevRevision !== undefined) {
    event.prevObject = withRevision(JSON.parse(r.prevValue) as StoredObject, r.prevRevision);
  }
  return event;
}

export function withRevision<T extends StoredObject>(obj: T, revision: number): T {
  obj.metadata = { ...(obj.metadata ?? {}), resourceVersion: String(revision) };
  return obj;
}
