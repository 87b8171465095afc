/**
 * POST /auth/revoke (RFC 7009) by whoever finds a key: the key is disabled through the store with
 * the reported-leaked reason, every replica refuses it on its next request and ends its watches,
 * the audit trail names the reporter's address and the source URL, and the answer is the same
 * whether or not the string was a key.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/api/key-format.js';
import { loggerOptions } from '../../src/cli/logging.js';
import { SqliteStore } from '../../src/store/backends/sqlite.js';
import { CachedStore } from '../../src/store/cache/cached-store.js';
import { adminHeaders, startInProcess, type InProcess } from '../support/in-process.js';
import { openWatch } from './watch-client.js';

const json = { 'Content-Type': 'application/json' };
const form = { 'Content-Type': 'application/x-www-form-urlencoded' };

async function makeKey(s: InProcess, name: string, spec: Record<string, unknown>): Promise<string> {
  const res = await s.fetch(`${s.api}/ownedaccesskeys`, { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name }, spec }) });
  expect(res.status).toBe(201);
  return ((await res.json()) as { spec: { key: string } }).spec.key;
}

const revoke = (s: InProcess, body: string, headers: Record<string, string> = form) => fetch(`${s.base}/auth/revoke`, { method: 'POST', headers, body });
const use = async (s: InProcess, key: string) => {
  const res = await fetch(`${s.api}/teams`, { headers: { Authorization: `Bearer ${key}` } });
  return { status: res.status, message: ((await res.json()) as { message?: string }).message };
};
const annotationsOf = async (s: InProcess, name: string) =>
  (((await (await s.fetch(`${s.api}/ownedaccesskeys/${name}`)).json()) as { metadata: { annotations?: Record<string, string> } }).metadata.annotations ?? {});

/** The first line of what the server answers to `head` (and as much body as it says) sent on a raw socket; `silent` when nothing comes within `ms`. */
function firstLine(base: string, head: string, ms: number): Promise<string> {
  return new Promise((resolve) => {
    const sock = connect(Number(new URL(base).port), '127.0.0.1', () => sock.write(head));
    const timer = setTimeout(() => (sock.destroy(), resolve('silent')), ms);
    sock.once('data', (d) => (clearTimeout(timer), sock.destroy(), resolve(d.toString().split('\r\n')[0]!)));
    sock.on('error', () => {});
  });
}

describe('POST /auth/revoke', () => {
  let s: InProcess;
  // The server's own log options (its redaction of secret field names included), as `teamkeys serve` logs.
  const logged: string[] = [];
  beforeAll(async () => {
    const sink = new Writable({ write: (chunk: Buffer, _e, done) => (logged.push(chunk.toString()), done()) });
    s = await startInProcess({ audit: true, logger: pino(loggerOptions('info'), sink), leakReports: { limit: { burst: 14, perSecond: 0.001 } } });
    const team = await s.fetch(`${s.api}/teams`, { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name: 'readers' }, spec: { users: ['rita'], clusterRoles: [{ name: 'teams-viewer' }] } }) });
    expect(team.status).toBe(201);
  });
  afterAll(() => s?.close());

  it('a live key reported with no credential: 200 {}, refused at once, its watch ended, the reason recorded, an audit event with the reporter and the source', async () => {
    const key = await makeKey(s, 'rita-ci', { user: 'rita' });
    expect((await use(s, key)).status).toBe(200);
    const w = await openWatch(`${s.api}/teams?watch=true`, key);
    expect(w.status).toBe(200);

    const res = await revoke(s, new URLSearchParams({ token: key, token_type_hint: 'access_token', source_url: 'https://github.com/acme/app/blob/main/.env#L3' }).toString());
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('{}\n'); // JSON bodies end in a newline, as kube-apiserver's do

    expect(await use(s, key)).toEqual({ status: 401, message: 'access key is disabled' });
    const error = await w.next((e) => e.type === 'ERROR', 5000);
    expect(error?.object).toMatchObject({ kind: 'Status', code: 401 });
    await w.ended(5000);
    expect(w.endedAt).toBeDefined();
    w.close();

    const stored = (await (await s.fetch(`${s.api}/ownedaccesskeys/rita-ci`)).json()) as { spec: { disabled?: boolean }; metadata: { annotations?: Record<string, string> } };
    expect(stored.spec.disabled).toBe(true);
    expect(stored.metadata.annotations?.['management.service/disabled-reason']).toBe('reported-leaked');

    const events = (await (await s.fetch(`${s.base}/kubernetes/management/apis/audit.management.service/v1/events?resource=ownedaccesskeys&name=rita-ci`)).json()) as {
      items: { verb: string; user: { username: string }; sourceIPs?: string[]; annotations?: Record<string, string> }[];
    };
    const disabling = events.items.find((e) => e.annotations?.['management.service/disabled-reason'] === 'reported-leaked');
    expect(disabling).toMatchObject({
      verb: 'patch',
      user: { username: 'system:anonymous' },
      sourceIPs: ['127.0.0.1'],
      annotations: {
        'management.service/reported-by': '127.0.0.1',
        'management.service/reported-via': 'revoke',
        'management.service/leak-source-url': 'https://github.com/acme/app/blob/main/.env#L3',
      },
    });
    expect(JSON.stringify(events)).not.toContain(key);
  });

  it('a random string, a tk_ value no key has, and a mistyped one get the same 200 {} and change nothing', async () => {
    const key = await makeKey(s, 'rita-other', { user: 'rita' });
    const before = await annotationsOf(s, 'rita-other');
    const mistyped = `${key.slice(0, -1)}${key.endsWith('0') ? '1' : '0'}`;
    for (const token of ['not-a-key-at-all', generateKey(), mistyped]) {
      const res = await revoke(s, new URLSearchParams({ token }).toString());
      expect(res.status).toBe(200);
      expect(await res.text()).toBe('{}\n'); // JSON bodies end in a newline, as kube-apiserver's do
    }
    expect((await use(s, key)).status).toBe(200);
    expect(await annotationsOf(s, 'rita-other')).toEqual(before);
  });

  it('a key of the old format authenticates and is revoked the same way', async () => {
    const old = `OldFormat${'q'.repeat(55)}`;
    const res = await s.fetch(`${s.api}/ownedaccesskeys`, { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name: 'old-format' }, spec: { user: 'rita', key: old } }) });
    expect(res.status).toBe(201);
    expect((await use(s, old)).status).toBe(200);
    expect((await revoke(s, `token=${old}`)).status).toBe(200);
    expect(await use(s, old)).toEqual({ status: 401, message: 'access key is disabled' });
  });

  it("a previous value still in its rotation's overlap disables the key; one past it leaves the key alone", async () => {
    const rotate = async (name: string, overlapSeconds: number) => {
      const res = await s.fetch(`${s.api}/ownedaccesskeys/${name}/rotation`, { method: 'POST', headers: json, body: JSON.stringify({ kind: 'KeyRotation', spec: { overlapSeconds } }) });
      expect(res.status).toBe(201);
      return ((await res.json()) as { spec: { key: string } }).spec.key;
    };
    const inOverlap = await makeKey(s, 'rita-overlap', { user: 'rita' });
    const overlapCurrent = await rotate('rita-overlap', 600);
    expect((await revoke(s, `token=${inOverlap}`)).status).toBe(200);
    expect(await use(s, overlapCurrent)).toEqual({ status: 401, message: 'access key is disabled' });

    const past = await makeKey(s, 'rita-past', { user: 'rita' });
    const pastCurrent = await rotate('rita-past', 0);
    expect((await revoke(s, `token=${past}`)).status).toBe(200);
    expect((await use(s, pastCurrent)).status).toBe(200);
    expect((await annotationsOf(s, 'rita-past'))['management.service/disabled-reason']).toBeUndefined();
  });

  it('a form without token, or a body that is not a form, is 400; the answer never carries the value', async () => {
    const missing = await revoke(s, 'source_url=https://example.com');
    expect(missing.status).toBe(400);
    const asJson = await revoke(s, JSON.stringify({ token: 'tk_whatever' }), json);
    expect(asJson.status).toBe(400);
    expect(await asJson.text()).not.toContain('tk_whatever');
  });

  it('no key is needed, and one is not looked at: the administrator key sent along changes nothing', async () => {
    const res = await fetch(`${s.base}/auth/revoke`, { method: 'POST', headers: { ...form, ...adminHeaders }, body: 'token=nothing-here' });
    expect(res.status).toBe(200);
  });

  it('a key of the older format reported with its value in the source URL: disabled, and the value is in neither the audit trail nor the log, which names the key', async () => {
    const old = 'Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2Rr1Qq0PpOoNnMm';
    await makeKey(s, 'old-ci', { user: 'rita', key: old });
    const res = await revoke(s, new URLSearchParams({ token: old, source_url: `https://paste.example/raw/${old}?again=${old}` }).toString());
    expect(res.status).toBe(200);
    expect((await use(s, old)).status).toBe(401);
    const events = await (await s.fetch(`${s.base}/kubernetes/management/apis/audit.management.service/v1/events?resource=ownedaccesskeys&name=old-ci`)).text();
    expect(events).toContain('https://paste.example/raw/[key removed]?again=[key removed]');
    expect(events).not.toContain(old);
    const line = logged.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === 'disabled access key "old-ci": reported leaked');
    expect(line).toMatchObject({ level: 40, keyName: 'old-ci', via: 'revoke', sourceUrl: 'https://paste.example/raw/[key removed]?again=[key removed]' });
    expect(logged.join('')).not.toContain(old);
  });

  // Last: it spends this address's whole budget.
  it('each client address has a budget of reports: then 429 with Retry-After, before the body is looked at', async () => {
    let refused: Response | undefined;
    for (let i = 0; i < 20 && !refused; i++) {
      const res = await revoke(s, 'token=probe');
      if (res.status === 429) refused = res;
      else expect(res.status).toBe(200);
    }
    expect(refused?.status).toBe(429);
    expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await refused!.json()) as { reason: string }).reason).toBe('TooManyRequests');
    // Past its budget, an address is answered before its body is read: a report whose body never
    // comes is refused at once, not held open while the server waits for 60,000 bytes.
    const head = 'POST /auth/revoke HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 60000\r\n\r\ntoken=abcd';
    expect(await firstLine(s.base, head, 3000)).toBe('HTTP/1.1 429 Too Many Requests');
  });
});

describe('POST /auth/revoke across replicas', () => {
  const dir = mkdtempSync(join(tmpdir(), 'teamkeys-revoke-replicas-'));
  const servers: InProcess[] = [];
  afterAll(async () => {
    for (const s of servers) await s.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('revoked through one server on a shared SQLite file: the other refuses the key on its next request and ends its watch', async () => {
    for (let i = 0; i < 2; i++) servers.push(await startInProcess({ store: new CachedStore(new SqliteStore(join(dir, 'teamkeys.db'), { pollIntervalMs: 50 })) }));
    const [a, b] = servers as [InProcess, InProcess];
    const key = await makeKey(a, 'shared-ci', { user: 'admin' });
    expect((await use(b, key)).status).toBe(200);
    const w = await openWatch(`${b.api}/ownedaccesskeys?watch=true`, key);
    expect(w.status).toBe(200);

    expect((await revoke(a, `token=${key}`)).status).toBe(200);
    // Reads on every replica are consistent (cache-replicas.test.ts): the very next request is refused.
    expect(await use(b, key)).toEqual({ status: 401, message: 'access key is disabled' });
    const error = await w.next((e) => e.type === 'ERROR', 5000);
    expect(error?.object).toMatchObject({ kind: 'Status', code: 401 });
    await w.ended(5000);
    expect(w.endedAt).toBeDefined();
    w.close();
  }, 30_000);
});
