/**
 * The time, as one injectable function: everything that decides by the clock (expiry, overlaps,
 * rotation schedules, unused keys, expiry warnings) takes a Clock, so tests step through days with
 * a clock they move by hand instead of sleeping.
 */
export type Clock = () => Date;

export const systemClock: Clock = () => new Date();
