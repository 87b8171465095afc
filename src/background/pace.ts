/**
 * The pace of background work over many objects (the sweeps, the cache's scans): a step of about
 * a millisecond of work, then a pause, so that requests arriving meanwhile wait at most a step.
 *
 * A pause, not a bare turn of the event loop: a request takes several turns (the revision read,
 * the writer thread's answer), and with a bare turn between steps each of its turns waited a whole
 * step. Measured on 60,000 keys (the key health sweep): a GET during a sweep took 11 ms with 250
 * keys a step and a bare turn, 1.7-2 ms with 100 keys a step and this pause; the sweep's own time
 * stayed the same, its wall time went from 0.7 s to 1.1 s.
 */

/** A timer of 1 ms: Node counts whole milliseconds, so it fires at the next one (up to 1 ms). */
const pauseMs = 1;

export class Pace {
  private units = 0;
  private active = 0;
  private since = performance.now();

  /** `step`: the units of work (a key decoded, say) that take about a millisecond together. */
  constructor(private readonly step: number) {}

  /** Counts `units` of work done; true once they make a step, when the caller awaits `pause()`. */
  counted(units = 1): boolean {
    this.units += units;
    if (this.units < this.step) return false;
    this.units = 0;
    return true;
  }

  /** Lets the event loop run timers, I/O and every turn that is ready, before the next step. */
  async pause(): Promise<void> {
    this.active += performance.now() - this.since;
    await new Promise((r) => setTimeout(r, pauseMs));
    this.since = performance.now();
  }

  /** The work's own time so far, ms: its steps, without the pauses between them. */
  get activeMs(): number {
    return this.active + (performance.now() - this.since);
  }
}
