/**
 * A lease on background work: at most one process of those sharing a store holds it at a time.
 * The holder renews it within a bounded interval and counts it lost at a deadline it computes on
 * its own clock, before the store could give it to another; its fencing token (fence.ts) lets the
 * store refuse the writes of a holder that lost it without knowing (paused, cut off).
 */

export interface Lease {
  /** Takes the lease if it is free; true while this process holds it. */
  tryAcquire(): Promise<boolean>;
  /** The fencing token of the current hold (grows with every change of holder); undefined when not held or not fenced. */
  token(): number | undefined;
  /** True while the hold is certainly this process's: false once its deadline passed without a renewal. */
  valid(): boolean;
  /** Called when a held lease is lost (renewal refused or overdue, connection dropped), with why. */
  onLost(callback: (reason: string) => void): void;
  /** Called after each renewal that kept the lease. */
  onRenewed(callback: () => void): void;
  release(): Promise<void>;
}

/** How long a hold lasts unrenewed, and how often it is renewed. */
export interface LeaseTiming {
  /** The longest a paused or cut-off holder can keep the lease from the others (default 15 s). */
  ttlMs?: number;
  /** How often the holder renews (default a fifth of ttlMs). */
  renewMs?: number;
}

export const defaultLeaseTtlMs = 15_000;

/** For a store only this process writes (memory): always held, nothing to fence. */
export class LocalLease implements Lease {
  async tryAcquire(): Promise<boolean> {
    return true;
  }
  token(): number | undefined {
    return undefined;
  }
  valid(): boolean {
    return true;
  }
  onLost(): void {}
  onRenewed(): void {}
  async release(): Promise<void> {}
}

/**
 * The renewal and deadline every shared lease has; a backend says how to take, renew and drop
 * its hold. The deadline is the send time of the last renewal that succeeded plus ttl, less a
 * margin for a late timer: the store keeps the lease at least ttl after that send, so the holder
 * steps down before another can have it. A renewal that fails is retried until the deadline.
 */
export abstract class RenewedLease implements Lease {
  private held: number | undefined;
  private deadline = 0;
  private renewTimer: NodeJS.Timeout | undefined;
  private deadlineTimer: NodeJS.Timeout | undefined;
  private lost: (reason: string) => void = () => {};
  private renewed: () => void = () => {};
  protected readonly ttlMs: number;
  protected readonly renewMs: number;

  constructor(timing: LeaseTiming = {}) {
    this.ttlMs = timing.ttlMs ?? defaultLeaseTtlMs;
    this.renewMs = timing.renewMs ?? Math.floor(this.ttlMs / 5);
  }

  /** Takes the lease when free; its fencing token, or undefined when another holds it. Throws when the store is out of reach. */
  protected abstract take(): Promise<number | undefined>;
  /** Renews the hold of `token`: false when it is no longer ours; throws when it could not ask (tried again). */
  protected abstract extend(token: number): Promise<boolean>;
  /** Lets the hold go (lost or released): closes what holds it. */
  protected abstract drop(): Promise<void>;

  async tryAcquire(): Promise<boolean> {
    if (this.held !== undefined) return true;
    const sentAt = Date.now();
    const token = await this.take();
    if (token === undefined) return false;
    this.held = token;
    this.extendTo(sentAt);
    this.scheduleRenewal(this.renewMs);
    return true;
  }

  token(): number | undefined {
    return this.held;
  }

  valid(): boolean {
    return this.held !== undefined && Date.now() < this.deadline;
  }

  onLost(callback: (reason: string) => void): void {
    this.lost = callback;
  }

  onRenewed(callback: () => void): void {
    this.renewed = callback;
  }

  async release(): Promise<void> {
    this.clearTimers();
    this.held = undefined;
    await this.drop();
  }

  /** Counts the hold as lost, once: the timers stop, the hold is dropped, the callback hears why. */
  protected lose(reason: string): void {
    if (this.held === undefined) return;
    this.clearTimers();
    this.held = undefined;
    void this.drop().catch(() => {});
    this.lost(reason);
  }

  private extendTo(sentAt: number): void {
    const margin = Math.min(1000, Math.floor(this.renewMs / 2));
    this.deadline = sentAt + this.ttlMs - margin;
    clearTimeout(this.deadlineTimer);
    this.deadlineTimer = setTimeout(() => this.lose(`no renewal succeeded within ${this.ttlMs - margin} ms`), Math.max(0, this.deadline - Date.now()));
    this.deadlineTimer.unref();
  }

  private scheduleRenewal(ms: number): void {
    this.renewTimer = setTimeout(() => void this.renew(), ms);
    this.renewTimer.unref();
  }

  private async renew(): Promise<void> {
    const token = this.held;
    if (token === undefined) return;
    const sentAt = Date.now();
    let kept: boolean;
    try {
      kept = await this.extend(token);
    } catch {
      // Could not ask (locked for a moment, a query failed): again soon, until the deadline says lost.
      if (this.held === token) this.scheduleRenewal(Math.min(this.renewMs, 250));
      return;
    }
    if (this.held !== token) return; // lost or released while renewing
    if (!kept) return this.lose('another process holds it now');
    this.extendTo(sentAt);
    this.renewed();
    this.scheduleRenewal(this.renewMs);
  }

  private clearTimers(): void {
    clearTimeout(this.renewTimer);
    clearTimeout(this.deadlineTimer);
  }
}
