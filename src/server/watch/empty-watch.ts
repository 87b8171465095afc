/** The source of a watch that never has anything to send (a kind listed for kubectl's defaults, listed-kinds.ts). */
import type { WatchSource } from './watch-connection.js';

/** Started at once, never overflows, and ends only when stopped: the connection around it still ends with its key, its time or its client. */
export function emptyWatch(): WatchSource {
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => (stop = resolve));
  return {
    started: Promise.resolve(),
    whenOverflowed: () => {},
    stop: () => stop(),
    async *[Symbol.asyncIterator]() {
      await stopped;
    },
  };
}
