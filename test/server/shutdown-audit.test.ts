/**
 * A stop in the middle of writes loses no audit event: every object a write committed before the
 * server stopped has its event in the trail, even when the clients gave up on their requests and
 * the store commits writes in a worker thread (the writes still in flight finish before the audit
 * trail and the store close).
 *
 * The writes are held in flight on purpose: this test process holds the SQLite file's write lock
 * (as a `teamkeys create` beside the server would) from before the first request until after
 * SIGTERM, so every write that commits was still under way when the signal arrived.
 */
import { request } from 'node:http';
import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openAuditTrail } from '../../src/store/audit/open.js';
import { SqliteStore } from '../../src/store/backends/sqlite.js';
import { eventually } from '../support/eventually.js';
import { startServe } from '../support/serve-process.js';

const adminKey = 'AdminKeyForTheShutdownAuditTest0123456789abcdefgh';
const dir = mkdtempSync(join(tmpdir(), 'teamkeys-shutdown-audit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('stopping while writes are in flight', () => {
  it('records an audit event for every write held in flight when SIGTERM arrived', async () => {
    const db = join(dir, 'teamkeys.db');
    const served = await startServe(['--store', `sqlite:${db}`, '--insecure-http'], { env: { TEAMKEYS_ADMIN_KEY: adminKey } });
    const url = new URL(`${served.url}/apis/management.service/v1/teams`);
    const body = JSON.stringify({ metadata: { generateName: 'inflight-' }, spec: { displayName: 'In flight' } });

    // The server's writes wait for this lock (up to busy_timeout, 5 s: far more than it is held).
    const lock = new Database(db);
    lock.exec('BEGIN IMMEDIATE');
    let answered = 0;
    let sent = 0;
    const pending = Array.from({ length: 40 }, () => {
      const req = request(url, { method: 'POST', agent: false, headers: { Authorization: `Bearer ${adminKey}`, 'Content-Type': 'application/json' } }, (res) => {
        res.resume();
        answered++;
      });
      req.on('error', () => {});
      req.on('finish', () => sent++);
      req.end(body);
      return req;
    });
    await eventually('every request was sent', () => sent === pending.length, 2000);
    // Room for the server to read them and reach the store.
    await new Promise((r) => setTimeout(r, 300));

    // The clients give up and the server is told to stop while the lock holds every write.
    for (const req of pending) req.destroy();
    expect(answered, 'no write was answered before SIGTERM').toBe(0);
    const stopping = served.stop('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    const exited = served.process.exitCode !== null || served.process.signalCode !== null;
    expect(exited, 'the server waits for the writes held in flight').toBe(false);
    lock.exec('COMMIT');
    lock.close();
    expect(await stopping).toBe(0);

    const store = new SqliteStore(db);
    const trail = openAuditTrail(store);
    try {
      const { items } = await store.list<{ metadata: { name: string; uid?: string } }>('/teams/');
      const created = items.map((t) => t.metadata.name).filter((n) => n.startsWith('inflight-'));
      // Each of these committed after the signal (the lock was held until then): it was in flight at shutdown.
      expect(created.length).toBeGreaterThan(0);
      const audited = new Set((await trail.list({ resource: 'teams', limit: 10_000 })).map((e) => e.objectRef.name));
      expect(created.filter((n) => !audited.has(n))).toEqual([]);
    } finally {
      await trail.close();
      await store.close();
    }
  }, 60_000);
});
