/**
 * The audit trail's route judges the caller before reading a body: a key that may not read the
 * trail, or a write to it, is answered while the body is still unsent (a review found a body of up
 * to 3 MiB read from any key holder before the 403). Checked on a raw socket that announces a large
 * body and never sends it.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminKey, startInProcess, type InProcess } from '../support/in-process.js';

const keyOf = (who: string) => `${who[0]!.toUpperCase()}${who.slice(1)}Key${'k'.repeat(40)}`;

/** The status line the server answers with while the announced body is withheld, or 'no answer' within `ms`. */
function statusBeforeBody(base: string, path: string, method: string, token: string, ms = 3000): Promise<string> {
  const url = new URL(`${base}${path}`);
  return new Promise((resolve) => {
    const socket = connect(Number(url.port), url.hostname);
    const timer = setTimeout(() => (socket.destroy(), resolve('no answer')), ms);
    socket.once('data', (d: Buffer) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(d.toString().split('\r\n')[0]!);
    });
    socket.write(`${method} ${url.pathname} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: application/json\r\nContent-Length: 2000000\r\n\r\n`);
  });
}

describe('the audit trail route, before the body', () => {
  let server: InProcess;
  const path = '/kubernetes/management/apis/audit.management.service/v1/events';
  beforeAll(async () => {
    server = await startInProcess({ audit: true });
    const made = await server.fetch(`${server.api}/ownedaccesskeys`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ metadata: { name: 'ana-key' }, spec: { user: 'ana', key: keyOf('ana') } }) });
    expect(made.status).toBe(201);
  });
  afterAll(() => server.close());

  it('answers 403 to a key that may not read it, and 405 to a write by one that may, without the body', async () => {
    expect(await statusBeforeBody(server.base, path, 'POST', keyOf('ana'))).toBe('HTTP/1.1 403 Forbidden');
    expect(await statusBeforeBody(server.base, path, 'PUT', adminKey)).toBe('HTTP/1.1 405 Method Not Allowed');
    // A read by an administrator is served as before.
    expect((await server.fetch(`${server.base}${path}?limit=1`)).status).toBe(200);
  });
});
