/**
 * GitHub's secret scanning partner endpoint: an alert signed with a test ECDSA key, published by a
 * loopback stand-in for GitHub's key URL, disables the key and is answered true_positive; a bad
 * signature is 401 and changes nothing; the published keys are fetched once and cached.
 */
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/api/key-format.js';
import { startInProcess, type InProcess } from '../support/in-process.js';
import { statusBeforeBody } from '../support/before-body.js';

const json = { 'Content-Type': 'application/json' };
const keyId = 'test-key-1';

function ecKey() {
  return generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
}

/** The stand-in for https://api.github.com/meta/public_keys/secret_scanning; counts its requests. */
async function startKeyServer(publicKey: KeyObject): Promise<{ url: string; requests: () => number; close: () => Promise<void> }> {
  let requests = 0;
  const body = JSON.stringify({ public_keys: [{ key_identifier: keyId, key: publicKey.export({ type: 'spki', format: 'pem' }), is_current: true }] });
  const server: Server = createServer((_req, res) => {
    requests++;
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(body);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/meta/public_keys/secret_scanning`, requests: () => requests, close: () => new Promise((done) => server.close(() => done())) };
}

describe('POST /auth/secret-scanning/github', () => {
  const github = ecKey();
  let keys: Awaited<ReturnType<typeof startKeyServer>>;
  let s: InProcess;
  beforeAll(async () => {
    keys = await startKeyServer(github.publicKey);
    s = await startInProcess({ audit: true, leakReports: { gitHubKeysUrl: keys.url } });
  });
  afterAll(async () => {
    await s?.close();
    await keys?.close();
  });

  const makeKey = async (name: string) => {
    const res = await s.fetch(`${s.api}/ownedaccesskeys`, { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name }, spec: { user: 'admin' } }) });
    expect(res.status).toBe(201);
    return ((await res.json()) as { spec: { key: string } }).spec.key;
  };
  const works = async (key: string) => (await fetch(`${s.api}/teams`, { headers: { Authorization: `Bearer ${key}` } })).status;
  const alert = (body: string, signature: string, id = keyId) =>
    fetch(`${s.base}/auth/secret-scanning/github`, { method: 'POST', headers: { ...json, 'Github-Public-Key-Identifier': id, 'Github-Public-Key-Signature': signature }, body });
  const signed = (body: string, by: KeyObject = github.privateKey) => sign('sha256', Buffer.from(body), by).toString('base64');
  const disabledReason = async (name: string) =>
    (((await (await s.fetch(`${s.api}/ownedaccesskeys/${name}`)).json()) as { metadata: { annotations?: Record<string, string> } }).metadata.annotations ?? {})['management.service/disabled-reason'];

  it('a signed alert disables a live key (true_positive) and answers false_positive for a string that is no key', async () => {
    const key = await makeKey('leaked-ci');
    const stranger = generateKey();
    const body = JSON.stringify([
      { token: key, type: 'teamkeys_access_key', url: 'https://github.com/acme/app/blob/abc/config.yml', source: 'content' },
      { token: stranger, type: 'teamkeys_access_key', url: 'https://github.com/acme/app/blob/abc/other.yml', source: 'content' },
    ]);
    const res = await alert(body, signed(body));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual([
      { token_raw: key, token_type: 'teamkeys_access_key', label: 'true_positive' },
      { token_raw: stranger, token_type: 'teamkeys_access_key', label: 'false_positive' },
    ]);
    expect(await works(key)).toBe(401);
    expect(await disabledReason('leaked-ci')).toBe('reported-leaked');
    const events = (await (await s.fetch(`${s.base}/kubernetes/management/apis/audit.management.service/v1/events?resource=ownedaccesskeys&name=leaked-ci`)).json()) as {
      items: { user: { username: string }; annotations?: Record<string, string> }[];
    };
    expect(events.items.find((e) => e.annotations?.['management.service/disabled-reason'] === 'reported-leaked')).toMatchObject({
      user: { username: 'system:github-secret-scanning' },
      annotations: { 'management.service/reported-via': 'github-secret-scanning', 'management.service/leak-source-url': 'https://github.com/acme/app/blob/abc/config.yml' },
    });
  });

  it('a bad signature (another key, an altered body, an unknown identifier, none) is 401 and changes nothing', async () => {
    const key = await makeKey('still-fine');
    const body = JSON.stringify([{ token: key, type: 'teamkeys_access_key', url: 'https://github.com/x/y', source: 'content' }]);
    const forger = ecKey();
    const attempts = [
      alert(body, signed(body, forger.privateKey)),
      alert(body.replace('content', 'commit'), signed(body)),
      alert(body, signed(body), 'no-such-key'),
      fetch(`${s.base}/auth/secret-scanning/github`, { method: 'POST', headers: json, body }),
    ];
    for (const res of await Promise.all(attempts)) {
      expect(res.status).toBe(401);
      const text = await res.text();
      expect(JSON.parse(text)).toMatchObject({ kind: 'Status', reason: 'Unauthorized' });
      expect(text).not.toContain(key);
    }
    expect(await works(key)).toBe(200);
    expect(await disabledReason('still-fine')).toBeUndefined();
  });

  it('an alert without the signature headers is 401 before its body is read', async () => {
    // A review found up to 3 MiB read first: the headers alone decide this refusal.
    expect(await statusBeforeBody(s.base, '/auth/secret-scanning/github', 'POST', {})).toBe('HTTP/1.1 401 Unauthorized');
    expect(await statusBeforeBody(s.base, '/auth/secret-scanning/github', 'POST', { 'Github-Public-Key-Identifier': keyId })).toBe('HTTP/1.1 401 Unauthorized');
  });

  it("GitHub's keys are fetched once and cached across alerts", async () => {
    const before = keys.requests();
    for (let i = 0; i < 3; i++) {
      const body = JSON.stringify([{ token: `nothing${i}`, type: 'teamkeys_access_key', url: '', source: 'content' }]);
      expect((await alert(body, signed(body))).status).toBe(200);
    }
    // The first test fetched them; the unknown identifier above may have fetched once more.
    expect(keys.requests()).toBeLessThanOrEqual(2);
    expect(keys.requests()).toBe(before);
  });
});
