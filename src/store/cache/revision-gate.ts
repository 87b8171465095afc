/**
 * Consistent reads from the cache (kube-apiserver's consistent list from cache): read the store's
 * current revision, then wait, for a bounded time, until the cache has applied it.
 */

interface Waiter {
  revision: number;
  resolve: (reached: boolean) => void;
  timer: NodeJS.Timeout;
}

export class RevisionGate {
  /** Every event up to this revision is in the cache. */
  private appliedRevision = 0;
  private open = false;
  private waiters: Waiter[] = [];
  private reading: Promise<number> | undefined;
  /** A read not started yet: whoever arrives before it starts shares it. */
  private pending: Promise<number> | undefined;

  constructor(private readonly readRevision: () => Promise<number>) {}

  get applied(): number {
    return this.appliedRevision;
  }

  /** Whether the cache holds a complete state to answer from. */
  get ready(): boolean {
    return this.open;
  }

  /** The cache holds the complete state at `revision` (after a list); reads may be answered again. */
  reset(revision: number): void {
    this.appliedRevision = revision;
    this.open = true;
    this.release();
  }

  advance(revision: number): void {
    if (revision <= this.appliedRevision) return;
    this.appliedRevision = revision;
    this.release();
  }

  /** The cache is not to be trusted (its watch failed): every waiter falls back to the store. */
  close(): void {
    this.open = false;
    for (const w of this.waiters) this.settle(w, false);
    this.waiters = [];
  }

  /** Resolves true once the cache has applied `revision`, false after `timeoutMs` or when it closes. */
  reach(revision: number, timeoutMs: number): Promise<boolean> {
    if (!this.open) return Promise.resolve(false);
    if (this.appliedRevision >= revision) return Promise.resolve(true);
    return new Promise((resolve) => {
      const w: Waiter = { revision, resolve, timer: setTimeout(() => this.expire(w), timeoutMs) };
      w.timer.unref();
      this.waiters.push(w);
    });
  }

  /**
   * The store's current revision, from a read that started after this call: callers arriving in one
   * turn of the event loop share the read made at its end (on SQLite, one query for the requests
   * parsed together; on PostgreSQL, one round trip), never a read already in flight, which may
   * predate a write they have already seen acknowledged.
   */
  currentRevision(): Promise<number> {
    if (this.pending) return this.pending;
    const inFlight = this.reading;
    const next: Promise<number> = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => inFlight?.then(
        () => undefined,
        () => undefined,
      ))
      .then(() => {
        if (this.pending === next) this.pending = undefined;
        return this.launch();
      });
    this.pending = next;
    return next;
  }

  private launch(): Promise<number> {
    const read: Promise<number> = this.readRevision().finally(() => {
      if (this.reading === read) this.reading = undefined;
    });
    this.reading = read;
    return read;
  }

  private release(): void {
    if (this.waiters.length === 0) return;
    const still: Waiter[] = [];
    for (const w of this.waiters) {
      if (w.revision <= this.appliedRevision) this.settle(w, true);
      else still.push(w);
    }
    this.waiters = still;
  }

  private expire(w: Waiter): void {
    this.waiters = this.waiters.filter((x) => x !== w);
    w.resolve(false);
  }

  private settle(w: Waiter, reached: boolean): void {
    clearTimeout(w.timer);
    w.resolve(reached);
  }
}
