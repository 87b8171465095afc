/**
 * A bounded push-to-pull queue: the producer pushes events, the watcher iterates them. Shared by
 * the store's watches (store/watch-queue.ts, which overflows with the store's WatchOverflow) and the
 * HTTP client's (client/http.ts), so the client needs nothing of the store.
 */

/** The error a queue too far behind fails with (`what`: "more than 10000 events behind"), unless its owner words its own. */
const behind = (what: string): Error => new Error(`watcher fell ${what}`);

/**
 * A bound on what waits by weight (an event's characters) besides count. A count alone let one
 * watcher that stopped reading pin 10,000 versions of a 3 MiB object (found by a review). Weight
 * alone cut off watchers that read: the log hands a page of up to 1,000 records to every watcher
 * in one turn, more than any sensible bound when the objects are large (the first attempt, stop
 * 66, reverted). So a queue overflows by weight only while it is both heavy and stale: past `max`,
 * with its oldest item waiting longer than `graceMs`. A reader that keeps up takes a burst within
 * moments whatever it weighs; one that stopped, or reads slower than the writes come, lets its
 * oldest item age and is cut off at the next push past the weight.
 */
export interface WeightBound {
  max: number;
  graceMs: number;
  /** A monotonic clock in milliseconds (performance.now; tests move their own). */
  now?: () => number;
}

export class BoundedQueue<T> implements AsyncIterable<T> {
  private items: T[] = [];
  /** Each waiting item's weight and when it was queued (kept only under a weight bound), and the sum of weights. */
  private weights: number[] = [];
  private since: number[] = [];
  private heavy = 0;
  /** How far behind the queue was when it overflowed ("more than 10000 events behind"), once it did. */
  overflowed: string | undefined;
  private waiter: ((r: IteratorResult<T>) => void) | undefined;
  private rejecter: ((err: unknown) => void) | undefined;
  private failure: unknown;
  private done = false;
  /** A producer waiting for the consumer to take items (see `room`). */
  private roomWaiter: { level: number; weightLevel: number; resolve: () => void } | undefined;

  /** @param maxPending a watcher this far behind is cut off rather than buffered without bound. */
  constructor(
    /** How many items may wait before the queue fails (overflows). */
    readonly maxPending: number,
    private readonly onClose: () => void = () => {},
    private readonly overflow: (what: string) => unknown = behind,
    private readonly bound?: WeightBound,
  ) {}

  /** Queues an item of this weight; false when it was refused (the queue is closed, or full and now failed). */
  push(item: T, weight = 0): boolean {
    if (this.done) return false;
    if (this.waiter) {
      const resolve = this.waiter;
      this.waiter = this.rejecter = undefined;
      resolve({ value: item, done: false });
      return true;
    }
    const what = this.items.length >= this.maxPending ? `more than ${this.maxPending} events behind` : this.staleAndHeavy(weight);
    if (what !== undefined) {
      this.overflowed = what;
      this.fail(this.overflow(what));
      return false;
    }
    this.items.push(item);
    if (this.bound) {
      this.weights.push(weight);
      this.since.push((this.bound.now?.() ?? performance.now()));
      this.heavy += weight;
    }
    return true;
  }

  /** How far behind the queue is when taking `weight` more would overflow the weight bound (see WeightBound), else undefined. */
  private staleAndHeavy(weight: number): string | undefined {
    const b = this.bound;
    if (!b || this.items.length === 0 || this.heavy + weight <= b.max) return undefined;
    return (b.now?.() ?? performance.now()) - this.since[0]! > b.graceMs ? `more than ${b.max} characters of events behind for over ${b.graceMs / 1000} s` : undefined;
  }

  /** Ends the stream with an error, delivered after the events already queued. */
  fail(err: unknown): void {
    if (this.done) return;
    this.failure = err;
    this.finish();
  }

  end(): void {
    if (this.done) return;
    this.finish();
  }

  get closed(): boolean {
    return this.done;
  }

  /** How many items wait for the consumer. */
  get pending(): number {
    return this.items.length;
  }

  /** What the waiting items weigh (0 without a weight bound). */
  get weight(): number {
    return this.heavy;
  }

  /**
   * Resolves once at most `level` items weighing at most `weightLevel` wait for the consumer, or
   * the queue is closed: a producer with a large batch (a watch's initial list, history from the
   * log) feeds it as the consumer takes it, instead of overflowing the queue. One producer waits at a time.
   */
  room(level: number, weightLevel = Infinity): Promise<void> {
    if (this.hasRoom(level, weightLevel)) return Promise.resolve();
    return new Promise((resolve) => {
      this.roomWaiter = { level, weightLevel, resolve };
    });
  }

  /** Whether a producer waiting for `level` items and `weightLevel` weight may go on (a closed queue lets it, to see the end). */
  hasRoom(level: number, weightLevel = Infinity): boolean {
    return this.done || (this.items.length <= level && this.heavy <= weightLevel);
  }

  private wakeProducer(): void {
    const w = this.roomWaiter;
    if (w && this.hasRoom(w.level, w.weightLevel)) {
      this.roomWaiter = undefined;
      w.resolve();
    }
  }

  private finish(): void {
    this.done = true;
    this.onClose();
    this.wakeProducer();
    if (this.waiter && this.items.length === 0) {
      const resolve = this.waiter;
      const reject = this.rejecter!;
      this.waiter = this.rejecter = undefined;
      if (this.failure !== undefined) reject(this.failure);
      else resolve({ value: undefined, done: true });
    }
  }

  private next(): Promise<IteratorResult<T>> {
    const item = this.items.shift();
    if (item !== undefined) {
      if (this.bound) {
        this.heavy -= this.weights.shift()!;
        this.since.shift();
      }
      this.wakeProducer();
      return Promise.resolve({ value: item, done: false });
    }
    if (this.done) {
      if (this.failure !== undefined) {
        const err = this.failure;
        this.failure = undefined;
        return Promise.reject(err);
      }
      return Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve, reject) => {
      this.waiter = resolve;
      this.rejecter = reject;
    });
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => this.next(),
      return: () => {
        this.end();
        this.items = [];
        this.weights = [];
        this.since = [];
        this.heavy = 0;
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
