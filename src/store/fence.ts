/**
 * Fencing of leader-only writes. Background work runs inside `runFenced(fence, ...)` (the Leader
 * starts it there), and every store write made from it, however deep, carries the lease's fencing
 * token: the backend checks it against the lease's current token in the write's own transaction
 * and refuses a stale one, so a leader that lost its lease without knowing (paused, cut off)
 * cannot write over the new leader's decisions. AsyncLocalStorage carries the fence through the
 * timers and promises the work creates, so no layer between the work and the store passes it on.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { StorageError } from './errors.js';

export interface Fence {
  /** The lease's fencing token for this hold: it grows every time the lease changes hands. */
  readonly token: number;
  /** False once the hold may have ended (its renewal is overdue): refused without asking the store. */
  valid(): boolean;
  /** Told of every write refused for this fence, so the leader can log and count it. */
  refused(err: StorageError): void;
}

const context = new AsyncLocalStorage<Fence>();

/** Runs fn (and everything it starts) with its store writes fenced by `fence`. */
export function runFenced<T>(fence: Fence, fn: () => T): T {
  return context.run(fence, fn);
}

/** The fence of the background work this call belongs to; undefined for requests and other work. */
export function currentFence(): Fence | undefined {
  return context.getStore();
}

/** The refusal of a write whose fencing token is not the lease's current one. */
export function fenced(key: string, token: number, current: number | undefined): StorageError {
  const now = current === undefined ? 'the lease is not held' : `the lease's token is now ${current}`;
  return new StorageError('Fenced', key, `refused a background write with fencing token ${token}: this replica no longer holds the background-work lease (${now})`);
}

/** Refused before reaching the store: the hold is over (or overdue for renewal) on this replica's own clock. */
export function overdue(key: string, token: number): StorageError {
  return new StorageError('Fenced', key, `refused a background write with fencing token ${token}: this replica's background-work lease is over or overdue for renewal`);
}
