/**
 * Starts and stops a server's background controllers, each with an explicit state. The server's
 * own supervisor runs the controllers of every replica (key activity, the leader election, the key
 * health sweep) from the moment the server is ready; the leader's runs the controllers that only
 * the lease holder runs (leader.ts) while it holds the lease. A stop is bounded per controller: a
 * controller that does not stop within the bound is named in a warning and left behind, so one
 * stuck controller cannot hold a server's close (a close once hung for the test's whole 30 s).
 */
import type { Logger } from 'pino';

/** A background controller: something that runs between a start and a stop (a timer, a watch, a loop). */
export interface Controller {
  name: string;
  start(): void | Promise<void>;
  stop(): void | Promise<void>;
  /** Its own bound, for a controller that supervises others (the leader: one bound per work, then the lease). */
  stopBoundMs?: number;
}

/**
 * A controller's state in its supervisor:
 * - idle: never started;
 * - running: started (its start may still be under way);
 * - stopping: stop called and not returned yet (also after the bound, when the close went on);
 * - stopped: stop returned; start again makes it running.
 */
export type ControllerState = 'idle' | 'running' | 'stopping' | 'stopped';

/** A controller's start threw (`cause`): the supervisor's start throws this, naming it. */
export class StartFailed extends Error {
  constructor(
    readonly controller: string,
    override readonly cause: unknown,
  ) {
    super(`background controller "${controller}" could not start`);
  }
}

/** How long a stop is waited for, per controller, before the close goes on without it. */
export const defaultStopBoundMs = 5_000;

interface Entry {
  controller: Controller;
  state: ControllerState;
  /** The start under way or done: a stop waits for it, so no controller is stopped while still starting. */
  started: Promise<void>;
  /** The stop under way: a start waits for it (a lease lost and won back before the stop ended). */
  stopped: Promise<void>;
}

export interface SupervisorOptions {
  /** Per controller (default 5 s). */
  stopBoundMs?: number;
}

export class Supervisor {
  private readonly entries: Entry[];
  /** Bumped by every stop: a start loop of an earlier run leaves the rest of its controllers alone. */
  private generation = 0;
  private stopping: Promise<void> | undefined;

  constructor(
    controllers: Controller[],
    private readonly log: Logger,
    private readonly opts: SupervisorOptions = {},
  ) {
    this.entries = controllers.map((controller) => ({ controller, state: 'idle', started: Promise.resolve(), stopped: Promise.resolve() }));
  }

  get names(): string[] {
    return this.entries.map((e) => e.controller.name);
  }

  /** Each controller's state, in start order. */
  states(): Record<string, ControllerState> {
    return Object.fromEntries(this.entries.map((e) => [e.controller.name, e.state]));
  }

  /**
   * Starts the controllers in order, each once the one before it has started. A controller whose
   * previous stop is still under way (it outlived its bound) is started last, once that stop ends:
   * never twice at once, and without holding back the controllers after it (a sync whose git fetch
   * hangs would otherwise keep the collector and the sweeps from running under a hold won back). A
   * stop meanwhile leaves the rest unstarted. A start that throws throws here and stays running, so
   * the stop that follows (the leader gives the lease up) stops what it may have begun.
   */
  async start(): Promise<void> {
    const generation = this.generation;
    const stillStopping: Entry[] = [];
    for (const e of this.entries) {
      if (generation !== this.generation) return;
      if (e.state === 'stopping') stillStopping.push(e);
      else if (e.state !== 'running') await this.startOne(e);
    }
    for (const e of stillStopping) {
      await e.stopped;
      if (generation !== this.generation) return;
      if (e.state !== 'running') await this.startOne(e);
    }
  }

  private async startOne(e: Entry): Promise<void> {
    e.state = 'running';
    e.started = Promise.resolve()
      .then(() => e.controller.start())
      .then(() => {});
    await e.started.catch((err: unknown) => {
      throw new StartFailed(e.controller.name, err);
    });
  }

  /** Stops the running controllers in reverse order, waiting for each at most the bound; never throws. */
  stop(): Promise<void> {
    this.generation++;
    // A second stop (the lease lost while the server closes) waits for the first, keeping the order.
    this.stopping ??= this.stopAll().finally(() => (this.stopping = undefined));
    return this.stopping;
  }

  private async stopAll(): Promise<void> {
    for (const e of [...this.entries].reverse()) {
      if (e.state === 'idle') e.state = 'stopped';
      if (e.state !== 'running') continue;
      await this.stopOne(e);
    }
  }

  private async stopOne(e: Entry): Promise<void> {
    const name = e.controller.name;
    const bound = e.controller.stopBoundMs ?? this.opts.stopBoundMs ?? defaultStopBoundMs;
    const began = Date.now();
    e.state = 'stopping';
    e.stopped = e.started
      .catch(() => {}) // a start that failed still gets its stop: it may have begun something
      .then(() => e.controller.stop())
      .catch((err: unknown) => this.log.warn({ err, controller: name }, 'background controller failed to stop'))
      .then(() => {
        if (e.state === 'stopping') e.state = 'stopped';
        const waitedMs = Date.now() - began;
        if (waitedMs > bound) this.log.warn({ controller: name, waitedMs }, `background controller "${name}" stopped ${waitedMs} ms after it was asked to`);
      });
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), bound);
      timer.unref();
    });
    const overdue = await Promise.race([e.stopped.then(() => false), late]);
    clearTimeout(timer);
    if (overdue) this.log.warn({ controller: name, waitedMs: Date.now() - began, boundMs: bound }, `background controller "${name}" did not stop within ${bound} ms; going on without waiting for it`);
  }
}
