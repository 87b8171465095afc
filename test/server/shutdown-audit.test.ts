/**
 * A stop in the middle of writes loses no audit event: every object a write committed before the
 * server stopped has its event in the trail, even when the clients gave up on their requests and
 * the store commits writes in a worker thread (the writes still in flight finish before the audit
 * trail and the store close).
 */
import { request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openAuditTrail } from '../../src/store/audit/open.js';
import { SqliteStore } from '../../src/store/backends/sqlite.js';
import { startServe } from './serve-process.js';

const adminKey = 'AdminKeyForTheShutdownAuditTest0123456789abcdefgh';
const dir = mkdtempSync(join(tmpdir(), 'teamkeys-shutdown-audit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('stopping while writes are in flight', () => {
  it('records an audit event for every write that was committed', async () => {
    const db = join(dir, 'teamkeys.db');
    const served = await startServe(['--store', `sqlite:${db}`, '--insecure-http'], { env: { TEAMKEYS_ADMIN_KEY: adminKey } });
    const url = new URL(`${served.url}/apis/management.service/v1/teams`);
    const body = JSON.stringify({ metadata: { generateName: 'inflight-' }, spec: { displayName: 'In flight' } });
    let answered = 0;
    const pending = Array.from({ length: 120 }, () => {
      const req = request(url, { method: 'POST', agent: false, headers: { Authorization: `Bearer ${adminKey}`, 'Content-Type': 'application/json' } }, (res) => {
        res.resume();
        answered++;
      });
      req.on('error', () => {});
      req.end(body);
      return req;
    });
    // Once writes are being answered, the clients give up and the server is told to stop.
    for (let i = 0; i < 500 && answered < 5; i++) await new Promise((r) => setTimeout(r, 5));
    for (const req of pending) req.destroy();
    expect(await served.stop('SIGTERM')).toBe(0);

    const store = new SqliteStore(db);
    const trail = openAuditTrail(store);
    try {
      const { items } = await store.list<{ metadata: { name: string; uid?: string } }>('/teams/');
      const created = items.map((t) => t.metadata.name).filter((n) => n.startsWith('inflight-'));
      expect(created.length).toBeGreaterThan(0);
      const audited = new Set((await trail.list({ resource: 'teams', limit: 10_000 })).map((e) => e.objectRef.name));
      expect(created.filter((n) => !audited.has(n))).toEqual([]);
    } finally {
      await trail.close();
      await store.close();
    }
  }, 60_000);
});
