/**
 * Consistent reads from the cache (kube-apiserver's consistent list from cache): read the store's
 * current revision, then wait, for a bounded time, until the cache has applied it.
 */

interface Waiter {
  revision: number;
  resolve: (reached: boolean) => void;
  timer: NodeJS.Timeout;
}

/**
 * The cache's readiness, kube-apiserver's cacher ready.go states; `markPending`, `markReady` and
 * `stop` move it. Invariants:
 * - Pending: the cache holds nothing it can vouch for (before its first fill, while filling, after
 *   its watch ended until filled again): reads go to the store, and no waiter is kept.
 * - Ready: the cache holds the complete state at `applied` and follows the store from there; a
 *   read waits, bounded, for `applied` to reach the store's revision read after it arrived.
 * - Stopped: closed for good; nothing makes it Ready again.
 */
export type Readiness = 'Pending' | 'Ready' | 'Stopped';

export class RevisionGate {
  /** Every event up to this revision is in the cache. */
  private appliedRevision = 0;
  private readiness: Readiness = 'Pending';
  private waiters: Waiter[] = [];
  private reading: Promise<number> | undefined;
  /** A read not started yet: whoever arrives before it starts shares it. */
  private pending: Promise<number> | undefined;

  constructor(private readonly readRevision: () => Promise<number>) {}

  get applied(): number {
    return this.appliedRevision;
  }

  get state(): Readiness {
    return this.readiness;
  }

  /** Pending -> Ready: the cache holds the complete state at `revision` (after a list). */
  markReady(revision: number): void {
    if (this.readiness === 'Stopped') return;
    this.appliedRevision = revision;
    this.readiness = 'Ready';
    this.release();
  }

  advance(revision: number): void {
    if (revision <= this.appliedRevision) return;
    this.appliedRevision = revision;
    this.release();
  }

  /** Ready -> Pending: the cache is not to be trusted (its watch ended); every waiter falls back to the store. */
  markPending(): void {
    if (this.readiness !== 'Stopped') this.readiness = 'Pending';
    for (const w of this.waiters) this.settle(w, false);
    this.waiters = [];
  }

  /** Any -> Stopped, for good (the cache closes). */
  stop(): void {
    this.markPending();
    this.readiness = 'Stopped';
  }

  /** Resolves true once the cache has applied `revision`, false after `timeoutMs` or when it closes. */
  reach(revision: number, timeoutMs: number): Promise<boolean> {
    if (this.readiness !== 'Ready') return Promise.resolve(false);
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
