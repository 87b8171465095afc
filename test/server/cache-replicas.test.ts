/**
 * Reads served from each replica's watch cache are consistent reads: a write acknowledged by one
 * `teamkeys serve` is seen by the very next GET and LIST on another, with no wait between them,
 * on one PostgreSQL database and on one SQLite file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { replicasOnPostgres } from '../store/postgres-server.js';
import { startServe, type Served } from './serve-process.js';

const adminKey = `CacheReplica${'c'.repeat(52)}`;
const rounds = 25;

type Call = (s: Served, path: string, init?: RequestInit) => Promise<Response>;
const call: Call = (s, path, init = {}) =>
  fetch(`${s.url}/apis/management.service/v1${path}`, {
    ...init,
    headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${adminKey}`, ...(init.headers as Record<string, string>) },
  });

interface Meta {
  metadata: { name: string; uid: string; resourceVersion: string };
  spec?: { displayName?: string };
}

/** Writes through `a` and reads back through `b` at once, `rounds` times: creates, updates, deletes, and a new key used at once. */
function readAfterWrite(replicas: () => [Served, Served]) {
  it('a Team created, changed or deleted through A is seen by the next GET and LIST through B', async () => {
    const [a, b] = replicas();
    for (let i = 0; i < rounds; i++) {
      const name = `raw-${i}`;
      const created = await call(a, '/teams', { method: 'POST', body: JSON.stringify({ metadata: { name } }) });
      expect(created.status).toBe(201);
      const { metadata } = (await created.json()) as Meta;
      const got = await call(b, `/teams/${name}`);
      expect(got.status).toBe(200);
      expect(((await got.json()) as Meta).metadata).toMatchObject({ uid: metadata.uid, resourceVersion: metadata.resourceVersion });
      const listed = (await (await call(b, '/teams')).json()) as { metadata: { resourceVersion: string }; items: Meta[] };
      expect(listed.items.find((t) => t.metadata.name === name)?.metadata.resourceVersion).toBe(metadata.resourceVersion);
      expect(Number(listed.metadata.resourceVersion)).toBeGreaterThanOrEqual(Number(metadata.resourceVersion));

      const patched = await call(a, `/teams/${name}`, { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ spec: { displayName: `v${i}` } }) });
      expect(patched.status).toBe(200);
      const after = (await (await call(b, `/teams/${name}`)).json()) as Meta;
      expect(after.spec?.displayName).toBe(`v${i}`);

      expect((await call(a, `/teams/${name}`, { method: 'DELETE' })).status).toBe(200);
      expect((await call(b, `/teams/${name}`)).status).toBe(404);
      const names = ((await (await call(b, '/teams')).json()) as { items: Meta[] }).items.map((t) => t.metadata.name);
      expect(names).not.toContain(name);
    }
  }, 60_000);

  it('an access key created through A authenticates through B on its first request', async () => {
    const [a, b] = replicas();
    for (let i = 0; i < 5; i++) {
      const key = `Fresh${i}${'k'.repeat(58)}`;
      const body = { metadata: { name: `fresh-${i}` }, spec: { user: `u${i}`, key } };
      expect((await call(a, '/ownedaccesskeys', { method: 'POST', body: JSON.stringify(body) })).status).toBe(201);
      const res = await fetch(`${b.url}/apis/management.service/v1/teams`, { headers: { Authorization: `Bearer ${key}` } });
      expect(res.status).not.toBe(401);
    }
  }, 30_000);

  it('a key disabled through A is refused by B on the very next request (it cannot make itself a replacement)', async () => {
    const [a, b] = replicas();
    for (let i = 0; i < 10; i++) {
      const key = `Doomed${i}${'d'.repeat(57)}`;
      expect((await call(a, '/ownedaccesskeys', { method: 'POST', body: JSON.stringify({ metadata: { name: `doomed-${i}` }, spec: { user: `d${i}`, key } }) })).status).toBe(201);
      const as = { headers: { Authorization: `Bearer ${key}` } };
      expect((await call(b, `/ownedaccesskeys/doomed-${i}`, as)).status).toBe(200);
      const off = await call(a, `/ownedaccesskeys/doomed-${i}`, { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ spec: { disabled: true } }) });
      expect(off.status).toBe(200);
      expect((await call(b, `/ownedaccesskeys/doomed-${i}`, as)).status).toBe(401);
      const replacement = await call(b, '/ownedaccesskeys', { method: 'POST', ...as, body: JSON.stringify({ metadata: { name: `replacement-${i}` }, spec: { user: `d${i}` } }) });
      expect(replacement.status).toBe(401);
    }
  }, 60_000);

  it('a member removed from a team through A has lost its rights on B at the next request', async () => {
    const [a, b] = replicas();
    for (let i = 0; i < 10; i++) {
      const key = `Member${i}${'m'.repeat(57)}`;
      const team = { metadata: { name: `viewers-${i}` }, spec: { users: [`m${i}`], clusterRoles: [{ name: 'teams-viewer' }] } };
      expect((await call(a, '/teams', { method: 'POST', body: JSON.stringify(team) })).status).toBe(201);
      expect((await call(a, '/teams', { method: 'POST', body: JSON.stringify({ metadata: { name: `hidden-${i}` } }) })).status).toBe(201);
      expect((await call(a, '/ownedaccesskeys', { method: 'POST', body: JSON.stringify({ metadata: { name: `member-${i}` }, spec: { user: `m${i}`, key } }) })).status).toBe(201);
      const as = { headers: { Authorization: `Bearer ${key}` } };
      expect((await call(b, `/teams/hidden-${i}`, as)).status).toBe(200);
      const out = await call(a, `/teams/viewers-${i}`, { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ spec: { users: ['someone-else'] } }) });
      expect(out.status).toBe(200);
      expect((await call(b, `/teams/hidden-${i}`, as)).status).toBe(403);
    }
  }, 60_000);
}

describe('two replicas on one PostgreSQL database read their own and each other\'s writes from their caches', () => {
  readAfterWrite(replicasOnPostgres(adminKey));
});

describe('two processes on one SQLite file read each other\'s writes from their caches', () => {
  let dir: string;
  let a: Served;
  let b: Served;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'teamkeys-cache-replicas-'));
    const start = () => startServe(['--store', `sqlite:${join(dir, 'store.db')}`, '--insecure-http'], { env: { TEAMKEYS_ADMIN_KEY: adminKey } });
    a = await start();
    b = await start();
  }, 60_000);
  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  readAfterWrite(() => [a, b]);
});
