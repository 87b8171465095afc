/**
 * The store's watch queue: the bounded queue of api/bounded-queue.ts, which fails a watcher that
 * falls too far behind with the store's WatchOverflow (the registry answers it with 410 Gone).
 */
import { BoundedQueue, type WeightBound } from '../api/bounded-queue.js';
import { StorageError } from './errors.js';

/**
 * The characters of stored JSON (an event's object and previous version) a watcher may have
 * waiting for longer than `graceMs` (bounded-queue.ts's WeightBound). Twice the log tail's replay
 * window (log-span.ts, 32 Mi), so a watcher can take the whole window in one turn.
 */
export const pendingWeight: WeightBound = { max: 64 * 1024 * 1024, graceMs: 5_000 };

export class WatchQueue<T> extends BoundedQueue<T> {
  /** @param maxPending a watcher this far behind (or pendingWeight's characters, for long) is cut off rather than buffered without bound. */
  constructor(maxPending: number, onClose: () => void = () => {}, bound: WeightBound = pendingWeight) {
    super(maxPending, onClose, (what) => new StorageError('WatchOverflow', '', `watcher fell ${what}`), bound);
  }
}
