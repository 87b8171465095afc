/**
 * Fencing of leader-only writes. Background work writes through a fenced view of the store
 * (fenced-store.ts; the registry's `fencedBy`), and every write it makes carries the fence of the
 * hold that started that work (Leader.fenceOf): the backend checks its token against the lease's current token in the
 * write's own transaction and refuses a stale one, so a leader that lost its lease without knowing
 * (paused, cut off) cannot write over the new leader's decisions.
 *
 * Passed explicitly, not carried by AsyncLocalStorage: on Node 20 an AsyncLocalStorage once used
 * hooks every promise of the process, requests included. Measured with the bench: 20-28% of GET
 * throughput (docs/performance.md, "fourth pass").
 */
import { StorageError } from './errors.js';

export interface Fence {
  /** The lease's fencing token for this hold: it grows every time the lease changes hands. */
  readonly token: number;
  /** False once the hold may have ended (its renewal is overdue): refused without asking the store. */
  valid(): boolean;
  /** Told of every write refused for this fence, so the leader can log and count it. */
  refused(err: StorageError): void;
}

/** The fence of a write from background work, asked at each write; undefined: not fenced (no lease tokens). */
export type FenceOf = () => Fence | undefined;

/** The refusal of a write whose fencing token is not the lease's current one. */
export function fenced(key: string, token: number, current: number | undefined): StorageError {
  const now = current === undefined ? 'the lease is not held' : `the lease's token is now ${current}`;
  return new StorageError('Fenced', key, `refused a background write with fencing token ${token}: this replica no longer holds the background-work lease (${now})`);
}

/** Refused before reaching the store: the hold is over (or overdue for renewal) on this replica's own clock. */
export function overdue(key: string, token: number): StorageError {
  return new StorageError('Fenced', key, `refused a background write with fencing token ${token}: this replica's background-work lease is over or overdue for renewal`);
}
