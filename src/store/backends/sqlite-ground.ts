/**
 * Whether the SQLite file the store opened is still the file at its path. An open connection keeps
 * writing to a file removed or replaced under it, and every write it acknowledges is gone at the
 * next start: so the store compares the file's identity (device and inode) and its header with what
 * it opened, for the database and its WAL, on a timer and after any failed write (sqlite-guard.ts).
 */
import { closeSync, openSync, readSync, statSync, type Stats } from 'node:fs';

const header = Buffer.from('SQLite format 3\0', 'latin1');

interface Identity {
  dev: number;
  ino: number;
}

const identityOf = (st: Stats): Identity => ({ dev: st.dev, ino: st.ino });
const same = (a: Identity, b: Identity) => a.dev === b.dev && a.ino === b.ino;

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

function startsWithHeader(path: string): boolean {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(header.length);
    const n = readSync(fd, buf, 0, buf.length, 0);
    return n === 0 || buf.subarray(0, n).equals(header.subarray(0, n));
  } finally {
    closeSync(fd);
  }
}

export class SqliteGround {
  private readonly db: Identity;
  /** The WAL as first seen: SQLite keeps it (same inode) while any connection is open, as ours are. */
  private wal: Identity | undefined;

  constructor(readonly path: string) {
    this.db = identityOf(statSync(path));
    this.walSeen();
  }

  private walSeen(): void {
    const st = statOrUndefined(`${this.path}-wal`);
    if (st && !this.wal) this.wal = identityOf(st);
  }

  /** Why the file at the path is no longer the store's file, or undefined while it is. */
  check(): string | undefined {
    const st = statOrUndefined(this.path);
    if (!st) return 'the SQLite file was removed from under the running server';
    if (!same(identityOf(st), this.db)) return 'the SQLite file was replaced by another file under the running server';
    if (!startsWithHeader(this.path)) return 'the SQLite file was overwritten under the running server (its header is not SQLite\'s)';
    if (this.wal) {
      const wal = statOrUndefined(`${this.path}-wal`);
      if (!wal) return 'the SQLite WAL file was removed from under the running server';
      if (!same(identityOf(wal), this.wal)) return 'the SQLite WAL file was replaced under the running server';
    } else this.walSeen();
    return undefined;
  }
}
