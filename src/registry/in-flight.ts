/**
 * The writes a registry has under way. A stop waits for them before the audit trail and the store
 * close: a write whose client went away still commits, and its audit event must follow it into
 * the trail rather than find the trail closed.
 */
export class InFlight {
  private count = 0;
  private idle: (() => void)[] = [];

  /** Counts `work` as in flight until it settles; returns it. */
  track<T>(work: Promise<T>): Promise<T> {
    this.count++;
    const done = () => {
      if (--this.count === 0) for (const wake of this.idle.splice(0)) wake();
    };
    work.then(done, done);
    return work;
  }

  /** Resolves once no write is in flight, or after timeoutMs (true when drained). */
  drained(timeoutMs: number): Promise<boolean> {
    if (this.count === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.idle.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }
}
