import { describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.js';
import { readEvents } from '../support/in-process.js';
import type { Served } from '../support/serve-process.js';
import { replicasOnPostgres } from './postgres-server.js';

const adminKey = `Replica${'r'.repeat(57)}`;
const leaseLine = 'acquired the background-work lease';

describe('two teamkeys serve replicas on one PostgreSQL database', () => {
  const replicas = replicasOnPostgres(adminKey);
  const api = (s: Served) => `${s.url}/apis/management.service/v1`;
  const call = (s: Served, path: string, init: RequestInit = {}) =>
    fetch(`${api(s)}${path}`, { ...init, headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${adminKey}`, ...(init.headers as Record<string, string>) } });

  it('an object created through A is read through B', async () => {
    const [a, b] = replicas();
    const created = await call(a, '/teams', { method: 'POST', body: JSON.stringify({ metadata: { name: 'shared' }, spec: { users: ['ana'] } }) });
    expect(created.status).toBe(201);
    const { metadata } = (await created.json()) as { metadata: { uid: string } };
    const read = (await (await call(b, '/teams/shared')).json()) as { metadata: { uid: string }; spec: unknown };
    expect(read.metadata.uid).toBe(metadata.uid);
    expect(read.spec).toEqual({ users: ['ana'] });
  });

  it('a watch on B sees the writes made through A, in revision order', async () => {
    const [a, b] = replicas();
    const { metadata } = (await (await call(b, '/teams')).json()) as { metadata: { resourceVersion: string } };
    const watch = await call(b, `/teams?watch=true&resourceVersion=${metadata.resourceVersion}`);
    await call(a, '/teams', { method: 'POST', body: JSON.stringify({ metadata: { name: 'w1' } }) });
    await call(a, '/teams/w1', { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ spec: { displayName: 'W' } }) });
    await call(a, '/teams/w1', { method: 'DELETE' });
    const events = await readEvents(watch, 3, 5000);
    expect(events.map((e) => [e.type, (e.object.metadata as { name: string }).name])).toEqual([
      ['ADDED', 'w1'],
      ['MODIFIED', 'w1'],
      ['DELETED', 'w1'],
    ]);
    const rvs = events.map((e) => Number((e.object.metadata as { resourceVersion: string }).resourceVersion));
    expect(rvs).toEqual([...rvs].sort((x, y) => x - y));
  });

  it('concurrent PUTs through A and B with the same resourceVersion: exactly one succeeds', async () => {
    const [a, b] = replicas();
    for (let round = 0; round < 5; round++) {
      const current = (await (await call(a, '/teams/shared')).json()) as Record<string, unknown> & { spec: Record<string, unknown> };
      const put = (s: Served, who: string) => call(s, '/teams/shared', { method: 'PUT', body: JSON.stringify({ ...current, spec: { ...current.spec, displayName: `${who}${round}` } }) });
      const codes = (await Promise.all([put(a, 'A'), put(b, 'B')])).map((r) => r.status).sort();
      expect(codes).toEqual([200, 409]);
    }
  });

  it('killing the replica that holds the background lease lets the other take it within seconds', async () => {
    const [a, b] = replicas();
    await eventually('a replica takes the lease', () => a.stderr().includes(leaseLine) || b.stderr().includes(leaseLine));
    expect(a.stderr().includes(leaseLine) && b.stderr().includes(leaseLine)).toBe(false);
    const [holder, other] = a.stderr().includes(leaseLine) ? [a, b] : [b, a];
    const killed = Date.now();
    await holder.stop('SIGKILL');
    await eventually('the other replica takes the lease over', () => other.stderr().includes(leaseLine), 15_000).catch((err: Error) => {
      throw new Error(`${err.message}:\n${other.stderr().slice(-2000)}`);
    });
    // About a second on a quiet machine (the lease is retried every second); ten times that.
    expect(Date.now() - killed).toBeLessThan(10_000);
    // The survivor still serves.
    expect((await call(other, '/teams/shared')).status).toBe(200);
  });
});
