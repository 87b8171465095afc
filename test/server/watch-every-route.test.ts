/**
 * Issue 33, path 3: every watch is one watch, whatever route serves it. The core `/api` kinds
 * listed for kubectl's defaults (`kubectl events -w`) and metadata-only watches take a place under
 * the per-key limit as the Teams and keys watches do, and end when their key stops authenticating.
 * Before this, a key held 600 `events` watches (the limit is 100) and kept them after it was disabled.
 * Shutdown ends them all through the one list of open watches (before, the events route kept its own).
 */
import { get } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiPrefix } from '../../src/server/server.js';
import { eventually } from '../support/eventually.js';
import { adminKey, startInProcess, type InProcess } from '../support/in-process.js';
import { openWatch, type Watching } from './watch-client.js';

const merge = { 'Content-Type': 'application/merge-patch+json' };
const metadataOnly = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';

describe('every watch route takes a place and follows its key', () => {
  let server: InProcess;
  const open: Watching[] = [];
  const core = () => `${server.base}${apiPrefix}/api/v1`;
  const watch = async (url: string, key: string) => {
    const w = await openWatch(url, key);
    open.push(w);
    return w;
  };
  const makeKey = async (name: string) => {
    const res = await server.fetch(`${server.api}/ownedaccesskeys`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ metadata: { name }, spec: { user: name } }),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { spec: { key: string } }).spec.key;
  };

  beforeAll(async () => {
    server = await startInProcess({ watchLimits: { maxPerKey: 3 } });
  });
  afterAll(async () => {
    for (const w of open) w.close();
    await server?.close();
  });

  it('the core events watch counts against the per-key limit, mixed with teams and metadata-only watches', async () => {
    const key = await makeKey('lim');
    expect((await watch(`${core()}/events?watch=1`, key)).status).toBe(200);
    expect((await watch(`${core()}/namespaces/default/events?watch=true`, key)).status).toBe(200);
    const meta = await fetch(`${server.api}/teams?watch=true`, { headers: { Authorization: `Bearer ${key}`, Accept: metadataOnly } });
    expect(meta.status).toBe(200);

    const refused = await watch(`${core()}/events?watch=1`, key);
    expect(refused.status).toBe(429);
    expect(refused.retryAfter).toBe('1');
    expect(refused.body).toMatchObject({
      kind: 'Status',
      code: 429,
      reason: 'TooManyRequests',
      message: 'too many watches open for this access key (the limit is 3); close one or retry later',
    });
    expect((await watch(`${server.api}/teams?watch=true`, key)).status).toBe(429);

    // The metadata-only watch gives its place back when its client leaves; an events watch takes it.
    await meta.body!.cancel();
    await eventually('the closed watch gives its place back', async () => {
      const again = await watch(`${core()}/events?watch=1`, key);
      return again.status === 200;
    });
    expect((await watch(`${core()}/namespaces/default/events?watch=true`, key)).status).toBe(429);
  });

  it('an events watch ends with ERROR 401 "access key is disabled" when its key is disabled, as a teams watch does', async () => {
    const key = await makeKey('dis');
    const events = await watch(`${core()}/events?watch=1`, key);
    const teams = await watch(`${server.api}/teams?watch=true`, key);
    expect([events.status, teams.status]).toEqual([200, 200]);
    const disabled = await server.fetch(`${server.api}/ownedaccesskeys/dis`, { method: 'PATCH', headers: merge, body: JSON.stringify({ spec: { disabled: true } }) });
    expect(disabled.status).toBe(200);
    for (const w of [events, teams]) {
      const error = await w.next((e) => e.type === 'ERROR', 5000);
      expect(error?.object).toMatchObject({ kind: 'Status', code: 401, reason: 'Unauthorized', message: 'access key is disabled' });
      await w.ended(2000);
      expect(w.endedAt).toBeDefined();
    }
  });

  it('an events watch ends with ERROR 401 when its key is deleted', async () => {
    const key = await makeKey('gone');
    const events = await watch(`${core()}/events?watch=1`, key);
    expect(events.status).toBe(200);
    expect((await server.fetch(`${server.api}/ownedaccesskeys/gone`, { method: 'DELETE' })).status).toBe(200);
    const error = await events.next((e) => e.type === 'ERROR', 5000);
    expect(error?.object).toMatchObject({ kind: 'Status', code: 401, reason: 'Unauthorized' });
    await events.ended(2000);
    expect(events.endedAt).toBeDefined();
  });
});

/** A watch on a connection of its own (no keep-alive, so the server's close does not wait for the client): its status and its body once the server ends it. */
function watchOnItsOwnConnection(url: string, key: string): Promise<{ status: number; body: Promise<string> }> {
  return new Promise((resolve, reject) => {
    get(url, { headers: { Authorization: `Bearer ${key}` }, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      resolve({ status: res.statusCode ?? 0, body: new Promise((done) => res.on('close', () => done(body))) });
    }).on('error', reject);
  });
}

describe('shutdown ends every watch route', () => {
  it('closing the server ends an open events watch and a teams watch instead of waiting out their time', async () => {
    const server = await startInProcess();
    const watches = [
      await watchOnItsOwnConnection(`${server.base}${apiPrefix}/api/v1/events?watch=1`, adminKey),
      await watchOnItsOwnConnection(`${server.api}/teams?watch=true`, adminKey),
    ];
    expect(watches.map((w) => w.status)).toEqual([200, 200]);
    const started = Date.now();
    await server.close();
    // The watches' time is 30 to 60 minutes; the close ended them, with no ERROR (clients reconnect).
    const bodies = await Promise.all(watches.map((w) => w.body));
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(bodies[0]).toBe('');
    expect(bodies[1]).not.toContain('"ERROR"');
  });
});
