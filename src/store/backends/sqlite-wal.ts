/**
 * Switching a connection's file to WAL. Two processes opening a new file at the same moment (a
 * server and a CLI command, or two servers) race for the switch, and SQLite answers the loser
 * SQLITE_BUSY at once (busy_timeout does not cover that lock), or hands back the old mode. So the
 * switch is tried again, briefly, until the timeout: the winner's switch takes milliseconds. A file
 * system without WAL (some network mounts) keeps answering another mode and is still refused.
 */
import type Database from 'better-sqlite3';

/** Blocks this thread for ms: a constructor opening a file has no event loop turn to wait in. */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

export function switchToWal(db: Database.Database, path: string, timeoutMs: number): void {
  if (path === ':memory:') {
    db.pragma('journal_mode = WAL');
    return;
  }
  const deadline = Date.now() + timeoutMs;
  for (let pause = 2; ; pause = Math.min(pause * 2, 50)) {
    let mode: unknown;
    try {
      mode = db.pragma('journal_mode = WAL', { simple: true });
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_BUSY' || Date.now() >= deadline) throw err;
    }
    if (mode === 'wal') return;
    if (mode !== undefined && Date.now() >= deadline) {
      throw new Error(`SQLite could not switch ${path} to WAL mode (it is in ${String(mode)} mode); use a local file system`);
    }
    sleepSync(pause);
  }
}
