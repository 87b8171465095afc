/**
 * The SQLite backend's watch over its own ground. Two kinds of trouble make writes 503 (with
 * Retry-After) and /readyz unready, each logged once with its reason:
 * - lost: the file was removed or replaced under the server (sqlite-ground.ts, checked on a timer
 *   and after a failed write). Every write from then on would be acknowledged into a file nobody
 *   will open again, so writes are refused until the server restarts (on the file put back, or
 *   with --start-empty).
 * - refused: the disk refused a write (full, read-only, an I/O error). Writes are tried as they
 *   come, and /readyz tries a one-row write itself, so the first write that succeeds (space back,
 *   the mount writable again) makes the store ready again.
 */
import type { AuditEvent } from '../../api/audit-event.js';
import { StorageError } from '../errors.js';
import type { LogBackend, Row } from '../log/log-backend.js';
import type { LogRecord, StoreLog } from '../types.js';
import { SqliteGround } from './sqlite-ground.js';

type MaybePromise<T> = T | Promise<T>;

/** A backend that can be asked for a write that changes nothing anyone reads. */
export type ProbedBackend = LogBackend & { probeWrite(): MaybePromise<void> };

/** How often the file's identity is checked when nothing fails. */
export const defaultGroundCheckMs = 1000;

/** Why SQLite refused a write, in words for the operator; undefined for errors that are not the disk's. */
export function diskRefusal(err: unknown): string | undefined {
  const code = (err as { code?: unknown }).code;
  if (typeof code !== 'string') return undefined;
  if (code === 'SQLITE_FULL') return 'the disk holding the SQLite file is full';
  if (code.startsWith('SQLITE_READONLY')) return 'the SQLite file cannot be written (a read-only file system or file)';
  if (code.startsWith('SQLITE_IOERR') || code === 'SQLITE_CANTOPEN') return `the disk holding the SQLite file failed a write (${code})`;
  return undefined;
}

export class SqliteGuard implements LogBackend {
  private readonly ground: SqliteGround;
  private lost: string | undefined;
  private refused: string | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly inner: ProbedBackend,
    path: string,
    private readonly log: StoreLog,
    checkEveryMs = defaultGroundCheckMs,
  ) {
    this.ground = new SqliteGround(path);
    this.timer = setInterval(() => this.checkGround(), checkEveryMs);
    this.timer.unref();
  }

  /** Looks at the file now; once lost, lost for good (the next start decides what to do). */
  private checkGround(): void {
    if (this.lost) return;
    let why: string | undefined;
    try {
      why = this.ground.check();
    } catch (err) {
      why = `the SQLite file cannot be examined: ${(err as Error).message}`;
    }
    if (!why) return;
    this.lost = why;
    this.log.error({ path: this.ground.path }, `${why}: writes are refused with 503 and /readyz is unready; restart the server once the file is back (or with --start-empty to begin an empty store)`);
  }

  private unavailable(why: string): StorageError {
    return new StorageError('Unreachable', '', why);
  }

  /** Runs a write unless the ground is lost; a failure is examined for a lost file or a refusing disk. */
  private async write<T>(run: () => MaybePromise<T>): Promise<T> {
    if (this.lost) throw this.unavailable(this.lost);
    try {
      const result = await run();
      if (this.refused) {
        this.log.info({ was: this.refused }, 'the SQLite file takes writes again: the store is ready');
        this.refused = undefined;
      }
      return result;
    } catch (err) {
      this.checkGround();
      if (this.lost) throw this.unavailable(this.lost);
      const why = diskRefusal(err);
      if (!why) throw err;
      if (this.refused !== why) this.log.error({ err, path: this.ground.path }, `${why}: writes are answered 503 and /readyz is unready until a write succeeds`);
      this.refused = why;
      throw this.unavailable(why);
    }
  }

  latest(key: string): MaybePromise<Row | undefined> {
    return this.inner.latest(key);
  }

  create(key: string, value: string, index: readonly string[], audit?: AuditEvent, fence?: number): Promise<number> {
    return this.write(() => this.inner.create(key, value, index, audit, fence));
  }

  update(key: string, value: string, expected: number, index: readonly string[], audit?: AuditEvent, fence?: number): Promise<number | undefined> {
    return this.write(() => this.inner.update(key, value, expected, index, audit, fence));
  }

  delete(key: string, expected: number, audit?: AuditEvent, fence?: number): Promise<number | undefined> {
    return this.write(() => this.inner.delete(key, expected, audit, fence));
  }

  list(start: string, end: string, after: string, revision: number, limit: number, contains?: string): MaybePromise<Row[]> {
    return this.inner.list(start, end, after, revision, limit, contains);
  }

  rewriteHistory(key: string, property: string, fence?: number): Promise<void> {
    return this.write(() => this.inner.rewriteHistory(key, property, fence));
  }

  findByIndex(start: string, end: string, index: string): MaybePromise<Row[]> {
    return this.inner.findByIndex(start, end, index);
  }

  readSince(after: number, limit: number): MaybePromise<LogRecord[]> {
    return this.inner.readSince(after, limit);
  }

  currentRevision(): MaybePromise<number> {
    return this.inner.currentRevision();
  }

  compactedRevision(): MaybePromise<number> {
    return this.inner.compactedRevision();
  }

  compact(revision: number, fence?: number): Promise<void> {
    return this.write(() => this.inner.compact(revision, fence));
  }

  /** Ready: the file is the one opened, it takes writes (tried again here while it did not), and it answers. */
  async ping(): Promise<void> {
    this.checkGround();
    if (this.lost) throw this.unavailable(this.lost);
    if (this.refused) await this.write(() => this.inner.probeWrite());
    await this.inner.ping();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.inner.close();
  }
}
