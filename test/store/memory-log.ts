/**
 * A change log as a backend holds it, in memory, for tests that drive the LogTail directly: read
 * after a revision, compacted as the backends compact (one statement over the log as it is:
 * tombstones and superseded rows at or below the revision go), and unreachable on demand.
 */
import { StorageError } from '../../src/store/errors.js';
import type { LogSource } from '../../src/store/log/log-source.js';
import type { LogRecord } from '../../src/store/types.js';

export interface MemoryLog {
  records: LogRecord[];
  source: LogSource;
  compact(revision: number): void;
  setUnreachable(unreachable: boolean): void;
}

export function memoryLog(): MemoryLog {
  const records: LogRecord[] = [];
  let compacted = 0;
  let unreachable = false;
  return {
    records,
    source: {
      readSince: (after, limit) => {
        if (unreachable) throw new StorageError('Unreachable', '', 'injected: the database cannot be reached');
        return records.filter((r) => r.revision > after).slice(0, limit);
      },
      compactedRevision: () => compacted,
      currentRevision: () => Math.max(compacted, ...records.map((r) => r.revision)),
    },
    compact(revision) {
      const gone = new Set(records.filter((r) => r.revision <= revision && (r.type === 'DELETED' || records.some((o) => o.key === r.key && o.revision > r.revision && o.revision <= revision))));
      records.splice(0, records.length, ...records.filter((r) => !gone.has(r)));
      compacted = revision;
    },
    setUnreachable(v) {
      unreachable = v;
    },
  };
}
