/**
 * The audit trail's storage, the same checks on every backend: append-only order, filters by
 * object and user, the newest `limit`, trimming by age, and (SQLite, PostgreSQL) survival of a
 * reopen. Events never reach the object log's watch stream.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditApiVersion, type AuditEvent } from '../../src/api/audit-event.js';
import { PostgresStore } from '../../src/store/backends/postgres.js';
import { SqliteStore } from '../../src/store/backends/sqlite.js';
import { MemoryStore } from '../../src/store/backends/memory.js';
import { openAuditTrail } from '../../src/store/audit/open.js';
import type { Store, StoredObject, WriteAudit } from '../../src/store/types.js';
import { startPostgres, type PostgresServer } from './postgres-server.js';

function event(n: number, name: string, username: string, time: string): AuditEvent {
  return {
    apiVersion: auditApiVersion,
    kind: 'Event',
    level: 'Metadata',
    auditID: `id-${n}`,
    stage: 'ResponseComplete',
    verb: 'patch',
    user: { username, keyName: `${username}-key` },
    objectRef: { apiGroup: 'management.service', apiVersion: 'management.service/v1', resource: 'teams', name, uid: `uid-${name}`, resourceVersion: String(n) },
    fieldManager: 'kubectl-patch',
    stageTimestamp: time,
  };
}

const backends: [string, () => Promise<{ open: () => Store; done: () => void }>][] = [
  ['memory', async () => ({ open: () => new MemoryStore(), done: () => {} })],
  [
    'sqlite',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'teamkeys-audit-'));
      return { open: () => new SqliteStore(join(dir, 'db.sqlite')), done: () => rmSync(dir, { recursive: true, force: true }) };
    },
  ],
  [
    'sqlite (worker threads)',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'teamkeys-audit-'));
      return { open: () => new SqliteStore(join(dir, 'db.sqlite'), { threads: true }), done: () => rmSync(dir, { recursive: true, force: true }) };
    },
  ],
  [
    'postgres',
    async () => {
      const url = await pg!.database();
      return { open: () => new PostgresStore(url), done: () => {} };
    },
  ],
];

let pg: PostgresServer | undefined;
beforeAll(async () => {
  pg = await startPostgres();
}, 60_000);
afterAll(() => pg?.stop());

describe.each(backends)('the audit trail on %s', (backend, setup) => {
  it('keeps events in order, filters them, trims them by age, and survives a reopen', async () => {
    const { open, done } = await setup();
    let store = open();
    let trail = openAuditTrail(store);
    const rev = await store.currentRevision();
    await trail.append([event(1, 'auditors', 'olga', '2026-01-01T00:00:00.000Z'), event(2, 'platform', 'admin', '2026-01-02T00:00:00.000Z')]);
    await trail.append([event(3, 'auditors', 'admin', '2026-01-03T00:00:00.000Z')]);
    expect((await trail.list({})).map((e) => e.auditID)).toEqual(['id-1', 'id-2', 'id-3']);
    expect((await trail.list({ resource: 'teams', name: 'auditors' })).map((e) => e.user.username)).toEqual(['olga', 'admin']);
    expect((await trail.list({ uid: 'uid-platform' })).map((e) => e.auditID)).toEqual(['id-2']);
    expect((await trail.list({ username: 'olga' }))[0]).toEqual(event(1, 'auditors', 'olga', '2026-01-01T00:00:00.000Z'));
    expect((await trail.list({ since: '2026-01-02T00:00:00.000Z' })).map((e) => e.auditID)).toEqual(['id-2', 'id-3']);
    expect((await trail.list({ limit: 2 })).map((e) => e.auditID)).toEqual(['id-2', 'id-3']);
    // The object log did not move: events are not objects, and no watch sees them.
    expect(await store.currentRevision()).toBe(rev);

    if (backend !== 'memory') {
      await trail.close();
      await store.close();
      store = open();
      trail = openAuditTrail(store);
      expect((await trail.list({})).map((e) => e.auditID)).toEqual(['id-1', 'id-2', 'id-3']);
    }
    expect(await trail.trim(new Date('2026-01-02T12:00:00.000Z'))).toBe(2);
    expect((await trail.list({})).map((e) => e.auditID)).toEqual(['id-3']);
    await trail.close();
    await store.close();
    done();
  });

  it('stores a write\'s event in the write\'s own transaction, at its revision; a refused write stores none', async () => {
    const { open, done } = await setup();
    const store = open();
    const trail = openAuditTrail(store);
    const audit = (verb: AuditEvent['verb'] | 'refused'): WriteAudit<StoredObject> => ({
      eventOf: (w) => ({ ...event(0, 'written', 'olga', '2026-02-01T00:00:00.000Z'), auditID: `${verb}-${w.removed ? 'removed' : 'kept'}` }),
    });
    const created = await store.create('/teams/written', { metadata: {} }, { audit: audit('create') });
    const updated = await store.guaranteedUpdate('/teams/written', undefined, (cur) => ({ ...cur, spec: { n: 1 } }), { audit: audit('update') });
    // Refused: the key exists. Its event must not be stored.
    await expect(store.create('/teams/written', { metadata: {} }, { audit: audit('refused') })).rejects.toMatchObject({ code: 'KeyExists' });
    const deleted = await store.delete('/teams/written', undefined, { audit: audit('delete') });
    const events = (await trail.list({ name: 'written' })).map((e) => `${e.auditID}@${e.objectRef.resourceVersion}`);
    expect(events).toEqual([
      `create-kept@${created.metadata!.resourceVersion}`,
      `update-kept@${updated.metadata!.resourceVersion}`,
      `delete-removed@${deleted.metadata!.resourceVersion}`,
    ]);
    await trail.close();
    await store.close();
    done();
  });
});
