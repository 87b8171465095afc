/** A clock a test moves by hand (src/clock.ts): pass `clock.now` wherever a Clock is taken. */
export class ManualClock {
  private ms: number;

  constructor(start: Date | string | number = Date.now()) {
    this.ms = new Date(start).getTime();
  }

  /** The Clock to inject. */
  readonly now = (): Date => new Date(this.ms);

  /** Moves the clock forward by `ms` milliseconds (or to a date). */
  advance(ms: number): void {
    this.ms += ms;
  }

  set(to: Date | string | number): void {
    this.ms = new Date(to).getTime();
  }
}

export const day = 86_400_000;
export const hour = 3_600_000;
