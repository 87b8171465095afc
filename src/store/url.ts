/** What the CLI says about store URLs before any store is opened: kept apart from open.ts so the help and the error type load no backend. */

export const defaultStoreUrl = 'sqlite:.teamkeys/teamkeys.db';

/** A store URL the user wrote wrong: the message says what to write instead. */
export class StoreUrlError extends Error {}
