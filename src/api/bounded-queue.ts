/**
 * A bounded push-to-pull queue: the producer pushes events, the watcher iterates them. Shared by
 * the store's watches (store/watch-queue.ts, which overflows with the store's WatchOverflow) and the
 * HTTP client's (client/http.ts), so the client needs nothing of the store.
 */

/** The error a queue `maxPending` events behind fails with, unless its owner words its own. */
const behind = (maxPending: number): Error => new Error(`watcher fell more than ${maxPending} events behind`);

export class BoundedQueue<T> implements AsyncIterable<T> {
  private items: T[] = [];
  private waiter: ((r: IteratorResult<T>) => void) | undefined;
  private rejecter: ((err: unknown) => void) | undefined;
  private failure: unknown;
  private done = false;
  /** A producer waiting for the consumer to take items (see `room`). */
  private roomWaiter: { level: number; resolve: () => void } | undefined;

  /** @param maxPending a watcher this far behind is cut off rather than buffered without bound. */
  constructor(
    /** How many items may wait before the queue fails (overflows). */
    readonly maxPending: number,
    private readonly onClose: () => void = () => {},
    private readonly overflow: (maxPending: number) => unknown = behind,
  ) {}

  /** Queues an item; false when it was refused (the queue is closed, or full and now failed). */
  push(item: T): boolean {
    if (this.done) return false;
    if (this.waiter) {
      const resolve = this.waiter;
      this.waiter = this.rejecter = undefined;
      resolve({ value: item, done: false });
      return true;
    }
    if (this.items.length >= this.maxPending) {
      this.fail(this.overflow(this.maxPending));
      return false;
    }
    this.items.push(item);
    return true;
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

  /**
   * Resolves once at most `level` items wait for the consumer, or the queue is closed: a producer
   * with a large batch (a watch's initial list) feeds it as the consumer takes it, instead of
   * overflowing the queue. One producer waits at a time.
   */
  room(level: number): Promise<void> {
    if (this.done || this.items.length <= level) return Promise.resolve();
    return new Promise((resolve) => {
      this.roomWaiter = { level, resolve };
    });
  }

  private wakeProducer(): void {
    const w = this.roomWaiter;
    if (w && (this.done || this.items.length <= w.level)) {
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
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
