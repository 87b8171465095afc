/**
 * Runs background work (compaction, garbage collection, the sync daemon) only while this process
 * holds the lease, so replicas on one database never do it twice; another takes over within
 * about a second of the holder stopping, and within the lease's ttl of the holder pausing or
 * being cut off (lease.ts). The work writes fenced (store/fence.ts; each through the registry's
 * `fencedBy(() => leader.fenceOf(name))`): its writes carry the token of the hold that started it,
 * and a write from a hold that is over is refused, logged and counted here. A database
 * out of reach is logged and tried again, with backoff up to 5 s; the lease is taken again once
 * the database is back.
 */
import type { Logger } from 'pino';
import type { StorageError } from '../../store/errors.js';
import type { Fence } from '../../store/fence.js';
import type { Lease } from '../../store/lease.js';
import { StartFailed, Supervisor, type Controller } from '../../background/supervisor.js';

/** What the leader reports to /metrics (leader-metrics.ts). */
export interface LeaderEvents {
  leading(yes: boolean): void;
  renewed(): void;
  lost(): void;
  refused(): void;
}

/** The fence of background work on a replica that never held the lease: every write refused before the store. */
export const notLeading: Fence = { token: 0, valid: () => false, refused: () => {} };

const noEvents: LeaderEvents = { leading: () => {}, renewed: () => {}, lost: () => {}, refused: () => {} };

/** Work the leader runs while it holds the lease (the name the notifier, audit and federation use). */
export type BackgroundWork = Controller;

const maxRetryMs = 5_000;

/**
 * The leader's state; `enter` moves it, and nothing else. Invariants:
 * - Idle: not started; no timer, no work running.
 * - Trying: asking for the lease, now or when `timer` fires; `failures` attempts in a row could
 *   not reach the database (the backoff). No work running.
 * - Leading: holds the lease (`lastHold` is this hold: its fence is the token's, when the lease
 *   has tokens); the work is started, or being started, in order by its supervisor.
 * - Stopped: stop() was called; no timer, the work stopped, the lease released. Final.
 */
type LeaderState =
  | { name: 'Idle' }
  | { name: 'Trying'; failures: number; timer: NodeJS.Timeout | undefined }
  | { name: 'Leading' }
  | { name: 'Stopped' };

export class Leader {
  private state: LeaderState = { name: 'Idle' };
  /** The latest hold, kept after it ends. */
  private lastHold: { fence: Fence | undefined } | undefined;
  /** The hold each controller was last started under: its writes carry that hold's fence (fenceOf). */
  private readonly startedUnder = new Map<string, { fence: Fence | undefined }>();
  /** Starts the work on taking the lease, stops it (each stop bounded) on losing it or stopping. */
  private readonly work: Supervisor;
  /** As `notLeading`, but a refusal is logged and counted here: a write of work this replica never started is a mistake to see. */
  private readonly neverStarted: Fence = {
    token: notLeading.token,
    valid: () => false,
    refused: (err) => {
      this.events.refused();
      this.log.warn({ object: err.key, reason: err.message }, 'refused a background write: its work was never started under the background-work lease on this replica');
    },
  };

  constructor(
    private readonly lease: Lease,
    work: BackgroundWork[],
    private readonly log: Logger,
    private readonly retryMs = 1000,
    private readonly events: LeaderEvents = noEvents,
    stopBoundMs?: number,
  ) {
    // Each start notes the hold it runs under. Not a spread: controllers are class instances too.
    const underHold = work.map(
      (c): Controller => ({
        name: c.name,
        start: () => {
          this.startedUnder.set(c.name, this.lastHold ?? { fence: this.neverStarted });
          return c.start();
        },
        stop: () => c.stop(),
        ...(c.stopBoundMs !== undefined ? { stopBoundMs: c.stopBoundMs } : {}),
      }),
    );
    this.work = new Supervisor(underHold, log, stopBoundMs !== undefined ? { stopBoundMs } : {});
    events.leading(false);
    lease.onRenewed(() => events.renewed());
    lease.onLost((reason) => {
      events.lost();
      this.log.warn({ reason }, 'lost the background-work lease; stopping background work');
      void this.stepDown(0).then(() => this.retry(0));
    });
  }

  /** Leading, and the lease not overdue on this replica's clock (a paused process wakes up not leading). */
  get isLeader(): boolean {
    return this.state.name === 'Leading' && this.lease.valid();
  }

  /** The leader's work and the state of each (tests, and a reader of the code, see what runs where). */
  workStates(): ReturnType<Supervisor['states']> {
    return this.work.states();
  }

  start(): void {
    if (this.state.name !== 'Idle') return;
    this.enter({ name: 'Trying', failures: 0, timer: undefined });
    void this.attempt();
  }

  async stop(): Promise<void> {
    const was = this.state;
    this.enter({ name: 'Stopped' });
    if (was.name === 'Leading') await this.work.stop();
    await this.lease.release();
  }

  /** The one place the state changes, with what goes with it: the retry timer, the leading metric. */
  private enter(next: LeaderState): void {
    const prev = this.state;
    if (prev.name === 'Trying') clearTimeout(prev.timer);
    this.state = next;
    if ((prev.name === 'Leading') !== (next.name === 'Leading')) this.events.leading(next.name === 'Leading');
  }

  /** Asks for the lease again after the retry interval, or the backoff after `failures` failed attempts. */
  private retry(failures: number): void {
    if (this.state.name === 'Stopped' || this.state.name === 'Leading') return;
    const delay = failures === 0 ? this.retryMs : Math.min(maxRetryMs, this.retryMs * 2 ** (failures - 1));
    const timer = setTimeout(() => void this.attempt(), delay);
    timer.unref();
    this.enter({ name: 'Trying', failures, timer });
  }

  private async attempt(): Promise<void> {
    if (this.state.name !== 'Trying') return;
    const failures = this.state.failures;
    try {
      if (!(await this.lease.tryAcquire())) return this.retry(0);
    } catch (err) {
      this.log.warn({ err, failedAttempts: failures + 1 }, 'could not try the background-work lease; retrying');
      return this.retry(failures + 1);
    }
    // Stopped while asking (the server closing): a lease taken meanwhile is given back, not kept
    // renewed until the process exits while the other replicas wait out its ttl.
    if (this.current().name === 'Stopped') return void (await this.lease.release().catch(() => {}));
    if (this.current().name !== 'Trying') return;
    const fence = this.holdFence();
    this.lastHold = { fence };
    const leading: LeaderState = { name: 'Leading' };
    this.enter(leading);
    this.log.info({ work: this.work.names, ...(fence ? { fencingToken: fence.token } : {}) }, 'acquired the background-work lease');
    try {
      // Stopped (the server closing, e.g. its port taken) while earlier work was starting: the supervisor leaves the rest stopped.
      await this.work.start();
    } catch (err) {
      // Work that cannot start (the database went away again) is retried with the lease.
      const failed = err instanceof StartFailed ? { err: err.cause, work: err.controller } : { err };
      this.log.warn(failed, 'background work could not start; giving the lease up and retrying');
      if (this.current() !== leading) return;
      await this.stepDown(1);
      await this.lease.release().catch(() => {});
      this.retry(1);
    }
  }

  /**
   * The fence of the writes of the controller `name`, asked at each write: the hold it was last
   * started under. A controller is started again only once its previous stop has ended
   * (supervisor.ts), so work that outlived its bounded stop writes under its own hold, refused,
   * logged and counted once that hold is over, never under a later one, while the other
   * controllers run under the new hold. The hold's fence stays valid while a close waits for the
   * work and the lease is still held, so the writes under way finish. For a controller never
   * started, a fence refusing every write (logged and counted); none when the lease has no tokens
   * (a single process's).
   */
  fenceOf(name: string): Fence | undefined {
    const hold = this.startedUnder.get(name);
    return hold ? hold.fence : this.neverStarted;
  }

  /**
   * The fence of the current hold, or of the last one once it is over (refused, logged, counted);
   * refusing (logged and counted) before any. For writes that are not a controller's pass but follow leadership as
   * it is at the moment (the key health sweep, which runs on every replica, disables while leading).
   */
  currentFence(): Fence | undefined {
    return this.lastHold ? this.lastHold.fence : this.neverStarted;
  }

  /**
   * As fenceOf, but none for a controller never started: the sidecar's, whose `POST /sync` on a
   * replica where its daemon never started runs one cycle in that request, unfenced (docs/daemon.md).
   */
  fenceOnceStarted(name: string): Fence | undefined {
    return this.startedUnder.get(name)?.fence;
  }

  /** The fence of this hold: valid while the lease is held with the same token. */
  private holdFence(): Fence | undefined {
    const token = this.lease.token();
    if (token === undefined) return undefined;
    return {
      token,
      valid: () => this.lease.token() === token && this.lease.valid(),
      refused: (err: StorageError) => {
        this.events.refused();
        this.log.warn({ object: err.key, fencingToken: token, reason: err.message }, 'refused a background write: this replica no longer holds the background-work lease');
      },
    };
  }

  /** A method, not `this.state` inline: TypeScript would keep a narrowing across awaits. */
  private current(): LeaderState {
    return this.state;
  }

  /** Leaves Leading (for Trying, `failures` failed attempts so far) and stops the work. */
  private async stepDown(failures: number): Promise<void> {
    if (this.state.name !== 'Leading') return;
    this.enter({ name: 'Trying', failures, timer: undefined });
    await this.work.stop();
  }
}
