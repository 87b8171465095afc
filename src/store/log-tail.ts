/**
 * Watch fan-out shared by every backend: one reader follows the log (woken by local writes, and
 * polling for other processes' writes, as kine does) and hands each record to every watcher it
 * concerns. A watcher starting in the past replays from a window of recent records, or from the
 * log itself when it starts further back.
 */
import { StorageError, expired, isStorageError } from './errors.js';
import type { LogRecord, StoreEvent, StoreWatch, StoredObject } from './types.js';
import { WatchQueue } from './watch-queue.js';

export interface LogSource {
  /** Records with revision > after, ascending, at most limit. */
  readSince(after: number, limit: number): LogRecord[] | Promise<LogRecord[]>;
  compactedRevision(): number | Promise<number>;
}

export interface LogTailOptions {
  /** How often to look for writes made by other processes; 0 when this process is the only writer. */
  pollIntervalMs: number;
  windowSize?: number;
  maxPendingPerWatcher?: number;
}

interface Subscriber {
  prefix: string;
  cursor: number;
  live: boolean;
  queue: WatchQueue<StoreEvent>;
}

const pageSize = 1000;

export class LogTail {
  private head = 0;
  private window: LogRecord[] = [];
  /** Every record with a revision above this one is in the window. */
  private windowStart = 0;
  private readonly subs = new Set<Subscriber>();
  private polling = false;
  private pollAgain = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly windowSize: number;
  private readonly maxPending: number;

  constructor(
    private readonly source: LogSource,
    private readonly opts: LogTailOptions,
  ) {
    this.windowSize = opts.windowSize ?? 4096;
    this.maxPending = opts.maxPendingPerWatcher ?? 10_000;
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
      // Nobody was following the log: start following it from here.
      this.head = this.windowStart = fromRevision;
      this.window = [];
    }
    this.subs.add(sub);
    this.startTimer();
    void this.start(sub);
    const queue = sub.queue as unknown as WatchQueue<StoreEvent<T>>;
    return {
      stop: () => queue.end(),
      progress: () => sub.cursor,
      [Symbol.asyncIterator]: () => queue[Symbol.asyncIterator](),
    };
  }

  /** Ends every watch, as when the store closes. */
  close(): void {
    for (const sub of [...this.subs]) sub.queue.end();
    this.stopTimer();
  }

  private async start(sub: Subscriber): Promise<void> {
    try {
      const compacted = await this.source.compactedRevision();
      if (sub.cursor < compacted) throw expired(sub.prefix, sub.cursor, compacted);
      // Catch up from the log itself while the window does not reach back far enough.
      while (sub.cursor < this.windowStart && !sub.queue.closed) {
        const records = await this.source.readSince(sub.cursor, pageSize);
        if (records.length === 0) break;
        for (const r of records) this.deliver(sub, r);
        sub.cursor = records[records.length - 1]!.revision;
      }
      for (const r of this.window) this.deliver(sub, r);
      sub.live = true;
      void this.poll();
    } catch (err) {
      sub.queue.fail(err);
    }
  }

  private deliver(sub: Subscriber, r: LogRecord): void {
    if (r.revision <= sub.cursor) return;
    sub.cursor = r.revision;
    if (!r.key.startsWith(sub.prefix)) return;
    sub.queue.push(eventOf(r));
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
          const records = await this.source.readSince(this.head, pageSize);
          for (const r of records) this.append(r);
          if (records.length < pageSize) break;
        }
      } while (this.pollAgain && this.subs.size > 0);
    } catch (err) {
      const failure = isStorageError(err) ? err : new StorageError('Unreachable', '', `watch read failed: ${String(err)}`);
      for (const sub of [...this.subs]) sub.queue.fail(failure);
    } finally {
      this.polling = false;
    }
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
    this.timer = undefined;
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
