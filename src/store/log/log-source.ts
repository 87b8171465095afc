/** What the log tail reads (a backend's log), and the one way it reads a page it can trust. */
import { expired } from '../errors.js';
import type { LogRecord } from '../types.js';

export interface LogSource {
  /** Records with revision > after, ascending, at most limit. */
  readSince(after: number, limit: number): LogRecord[] | Promise<LogRecord[]>;
  compactedRevision(): number | Promise<number>;
  /** The last revision written: a watch may ask for a later one, the tail must not follow from there. */
  currentRevision(): number | Promise<number>;
}

/** Records per read; a shorter page means the reader is at the end of the log. */
export const pageSize = 1000;

/**
 * A page of the log after `after`, or Expired when history after `after` may have been
 * compacted away (a tail that could not read the log while other replicas wrote and compacted):
 * resuming past the gap would skip a deletion, and a watcher would never learn of it. Compaction
 * is checked after the read, so a page read before a compaction that went past it is not trusted.
 */
export async function readComplete(source: LogSource, prefix: string, after: number): Promise<LogRecord[]> {
  const records = await source.readSince(after, pageSize);
  const compacted = await source.compactedRevision();
  if (compacted > after) throw expired(prefix, after, compacted);
  return records;
}
