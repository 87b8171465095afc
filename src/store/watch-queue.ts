/**
 * The store's watch queue: the bounded queue of api/bounded-queue.ts, which fails a watcher that
 * falls too far behind with the store's WatchOverflow (the registry answers it with 410 Gone).
 */
import { BoundedQueue } from '../api/bounded-queue.js';
import { StorageError } from './errors.js';

export class WatchQueue<T> extends BoundedQueue<T> {
  /** @param maxPending a watcher this far behind is cut off rather than buffered without bound. */
  constructor(maxPending: number, onClose: () => void = () => {}) {
    super(maxPending, onClose, (n) => new StorageError('WatchOverflow', '', `watcher fell more than ${n} events behind`));
  }
}
