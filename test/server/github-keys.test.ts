/**
 * GitHub's secret scanning keys (src/server/leaks/github-keys.ts) against a loopback stand-in for
 * GitHub's key URL that can be made to fail: while the list cannot be fetched, requests do not each
 * fetch it (a review saw 30 requests make 30 fetches), and a list fetched before keeps verifying
 * after its hour when a fetch fails, rather than every alert being answered 503.
 */
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GitHubKeys } from '../../src/server/leaks/github-keys.js';

describe("GitHub's secret scanning keys when GitHub cannot be reached", () => {
  const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const body = JSON.stringify({ public_keys: [{ key_identifier: 'k1', key: publicKey.export({ type: 'spki', format: 'pem' }) }] });
  let failing = true;
  let requests = 0;
  let server: Server;
  let url: string;
  beforeAll(async () => {
    server = createServer((_req, res) => {
      requests++;
      if (failing) res.writeHead(502).end();
      else res.writeHead(200, { 'Content-Type': 'application/json' }).end(body);
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/keys`;
  });
  afterAll(() => new Promise<void>((done) => server.close(() => done())));

  it('fetches at most once a minute while fetches fail, says why each time, and takes the list up once it can be fetched', async () => {
    let now = 1_000_000;
    const keys = new GitHubKeys(url, () => now);
    failing = true;
    requests = 0;
    for (let i = 0; i < 30; i++) await expect(keys.keyFor('k1')).rejects.toThrow(`GitHub's secret scanning keys (${url}) answered 502`);
    expect(requests).toBe(1);
    now += 59_000;
    await expect(keys.keyFor('k1')).rejects.toThrow('answered 502');
    expect(requests).toBe(1);
    now += 1_000;
    failing = false;
    expect((await keys.keyFor('k1'))?.asymmetricKeyType).toBe('ec');
    expect(requests).toBe(2);
  });

  it('keeps verifying with the list it has when a fetch fails after the list’s hour, and asks again a minute later', async () => {
    let now = 5_000_000;
    const keys = new GitHubKeys(url, () => now);
    failing = false;
    requests = 0;
    expect(await keys.keyFor('k1')).toBeDefined();
    failing = true;
    now += 60 * 60_000 + 1;
    for (let i = 0; i < 10; i++) expect((await keys.keyFor('k1'))?.asymmetricKeyType).toBe('ec');
    // An identifier GitHub does not publish is still unknown, and costs no fetch within the minute.
    expect(await keys.keyFor('forged')).toBeUndefined();
    expect(requests).toBe(2);
    now += 60_000;
    failing = false;
    expect(await keys.keyFor('k1')).toBeDefined();
    expect(requests).toBe(3);
  });
});
