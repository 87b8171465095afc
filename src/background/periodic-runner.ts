/**
 * One pass at a time, on a timer and when asked: the loop every background controller runs (the
 * garbage collector, the sweeps, the identity refresh, the sync daemon's cycles). A pass asked for
 * while one runs is run once right after it, however often it was asked (asks coalesce); stop
 * waits for the pass in flight, so nothing of the controller still writes once it has stopped.
 */

/**
 * The runner's state; `enter` moves it, and nothing else. Invariants:
 * - Idle: not started; no timer. A pass asked for (`run`) still runs, once, with no timer after it
 *   (tests and the leader's first sweep ask before or without a start).
 * - Waiting: `timer` fires the next pass at `due` (ms since the epoch); `periodic`: started (a
 *   pass asked for with `soon` before any start waits too, and is followed by no timer).
 * - Running: `pass` is in flight; `next` is the pass asked for meanwhile, run as soon as it ends,
 *   or `gatherMs` after it when only `soon` asked (changes keep being gathered after a pass, as
 *   before it: the pass's own writes are seen as changes and must not start the next one at once);
 *   `periodic`: started, so a timer follows the pass.
 * - Stopping: stop() was called during `pass`; no pass and no timer follows it.
 * - Stopped: no timer, no pass. `start` leaves it (a replica may lose the lease and win it back).
 */
export type RunnerState<T> =
  | { name: 'Idle' }
  | { name: 'Waiting'; timer: NodeJS.Timeout; due: number; periodic: boolean }
  | { name: 'Running'; pass: Promise<T>; next: Deferred<T | undefined> | undefined; gatherMs?: number; periodic: boolean }
  | { name: 'Stopping'; pass: Promise<unknown> }
  | { name: 'Stopped' };

/** Why a pass runs: its timer fired, or someone asked (`run`, `soon`). */
export type PassCause = 'timer' | 'asked';

export interface PeriodicRunnerOptions<T> {
  /** One pass; a rejection reaches whoever asked for it, and `onError` when the timer started it. */
  pass: (cause: PassCause) => Promise<T>;
  /** The wait after a pass before the next one: fixed, or decided after each pass (backoff, jitter). */
  intervalMs: number | (() => number);
  /** A failed pass nobody awaits (one the timer started): log it, the next interval tries again. */
  onError: (err: unknown) => void;
}

interface Deferred<T> {
  promise: Promise<T>;
  settle(p: Promise<T>): void;
}

function deferred<T>(): Deferred<T> {
  let settle!: (p: Promise<T>) => void;
  const promise = new Promise<T>((resolve) => (settle = resolve));
  return { promise, settle };
}

export class PeriodicRunner<T = void> {
  private current: RunnerState<T> = { name: 'Idle' };
  /**
   * When the timer's pass is due (ms since the epoch), from the timer's wait until a timer pass
   * begins. A pass asked for (run, soon) may take the timer's place, but not its due time: asks
   * more frequent than the interval would otherwise put the timer's pass off for ever, and a
   * controller whose timer pass does more than an asked one (the notifier's sweep) would never do it.
   */
  private timerDue: number | undefined;

  constructor(private readonly opts: PeriodicRunnerOptions<T>) {}

  get state(): RunnerState<T>['name'] {
    return this.current.name;
  }

  /** Started and not stopped since (a pass asked for before any start does not count). */
  get started(): boolean {
    const s = this.current;
    return (s.name === 'Waiting' || s.name === 'Running') && s.periodic;
  }

  /** Stopping or stopped: a long pass checks this to end early (no new write once stop was asked). */
  get stopping(): boolean {
    return this.current.name === 'Stopping' || this.current.name === 'Stopped';
  }

  /** Starts the timer: the first pass after `firstDelayMs` (default the interval; 0: now). */
  start(firstDelayMs?: number): void {
    const s = this.current;
    if (s.name === 'Running' || s.name === 'Waiting') s.periodic = true;
    // Asked for a pass now while an unstarted one runs: the start's own pass follows it.
    if (s.name === 'Running' && firstDelayMs !== undefined && firstDelayMs <= 0) this.soon(0);
    if (s.name !== 'Idle' && s.name !== 'Stopped') return;
    this.timerDue = undefined;
    const delay = firstDelayMs ?? this.interval();
    if (delay <= 0) void this.begin('timer', true).catch(this.opts.onError);
    else this.wait(delay, 'timer', true);
  }

  /**
   * A pass from now: at once, or right after the one in flight. Resolves with its result, or with
   * undefined when the runner is stopping or stopped (no pass runs then).
   */
  run(): Promise<T | undefined> {
    const s = this.current;
    if (s.name === 'Stopping' || s.name === 'Stopped') return Promise.resolve(undefined);
    if (s.name === 'Running') {
      delete s.gatherMs; // someone waits for this pass: it runs as soon as the one in flight ends
      return (s.next ??= deferred()).promise;
    }
    if (s.name === 'Waiting') clearTimeout(s.timer);
    return this.begin('asked', s.name === 'Waiting' && s.periodic);
  }

  /** A pass within `ms` (a burst of changes gathered into one): the timer moves earlier, never later. */
  soon(ms: number): void {
    const s = this.current;
    if (s.name === 'Running') {
      if (!s.next) {
        s.next = deferred();
        s.gatherMs = ms;
        void s.next.promise.catch(this.opts.onError);
      } else if (s.gatherMs !== undefined) s.gatherMs = Math.min(s.gatherMs, ms);
      return;
    }
    if (s.name === 'Waiting' && s.due <= Date.now() + ms) return;
    if (s.name === 'Waiting') clearTimeout(s.timer);
    if (s.name === 'Idle' || s.name === 'Waiting') this.wait(ms, 'asked', s.name === 'Waiting' && s.periodic);
  }

  /** No new pass, no timer; resolves once the pass in flight (if any) has ended. */
  async stop(): Promise<void> {
    const s = this.current;
    if (s.name === 'Waiting') clearTimeout(s.timer);
    if (s.name === 'Idle' || s.name === 'Waiting') this.current = { name: 'Stopped' };
    if (s.name === 'Running') {
      this.current = { name: 'Stopping', pass: s.pass };
      s.next?.settle(Promise.resolve(undefined));
    }
    const now = this.current;
    if (now.name === 'Stopping') await now.pass.then(
      () => {},
      () => {},
    );
  }

  private interval(): number {
    return typeof this.opts.intervalMs === 'number' ? this.opts.intervalMs : this.opts.intervalMs();
  }

  private wait(ms: number, cause: PassCause, periodic: boolean): void {
    if (cause === 'timer') this.timerDue = Date.now() + ms;
    const timer = setTimeout(() => void this.begin(cause, periodic).catch(this.opts.onError), ms);
    timer.unref();
    this.current = { name: 'Waiting', timer, due: Date.now() + ms, periodic };
  }

  private begin(asked: PassCause, periodic: boolean): Promise<T> {
    // A pass that begins when the timer's is due, whoever asked for it, is the timer's pass.
    const cause: PassCause = periodic && this.timerDue !== undefined && Date.now() >= this.timerDue ? 'timer' : asked;
    if (cause === 'timer') this.timerDue = undefined;
    const pass = Promise.resolve().then(() => this.opts.pass(cause));
    const state: RunnerState<T> = { name: 'Running', pass, next: undefined, periodic };
    this.current = state;
    const after = () => this.ended(state);
    pass.then(after, after);
    return pass;
  }

  /** The pass of `was` ended: the one asked for meanwhile runs now, else the timer, else idle or stopped. */
  private ended(was: RunnerState<T> & { name: 'Running' }): void {
    const s = this.current;
    if (s.name === 'Stopping' && s.pass === was.pass) {
      this.current = { name: 'Stopped' };
      return;
    }
    if (s !== was) return;
    if (was.next && was.gatherMs !== undefined && was.gatherMs > 0) {
      // Only `soon` asked: nobody awaits the result, and what changes next is gathered too.
      was.next.settle(Promise.resolve(undefined));
      this.wait(was.gatherMs, 'asked', was.periodic);
    } else if (was.next) was.next.settle(this.begin('asked', was.periodic));
    else if (was.periodic) {
      // The interval is asked after every pass (a controller's backoff reads how the pass went), and
      // a timer pass put off by asks still comes no later than it was due.
      const next = this.interval();
      this.wait(this.timerDue === undefined ? next : Math.min(next, Math.max(0, this.timerDue - Date.now())), 'timer', true);
    }
    else this.current = { name: 'Idle' };
  }
}
