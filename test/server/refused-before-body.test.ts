/**
 * Routes judge the caller and the method before reading a body: a key that may not read the audit
 * trail, a write to it, a method a subresource does not serve, a review that is not a create, are
 * answered while the body is still unsent (reviews found bodies of up to 3 MiB read, and YAML
 * decoded, before such refusals). Checked on a raw socket that announces a large body and never
 * sends it.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminKey, startInProcess, type InProcess } from '../support/in-process.js';
import { statusBeforeBody } from '../support/before-body.js';

const keyOf = (who: string) => `${who[0]!.toUpperCase()}${who.slice(1)}Key${'k'.repeat(40)}`;

/** As statusBeforeBody, with a bearer key and a content type. */
const before = (base: string, path: string, method: string, token: string, ms = 3000, type = 'application/json') => statusBeforeBody(base, path, method, { Authorization: `Bearer ${token}`, 'Content-Type': type }, ms);

describe('routes, before the body', () => {
  let server: InProcess;
  const path = '/kubernetes/management/apis/audit.management.service/v1/events';
  beforeAll(async () => {
    server = await startInProcess({ audit: true });
    const made = await server.fetch(`${server.api}/ownedaccesskeys`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ metadata: { name: 'ana-key' }, spec: { user: 'ana', key: keyOf('ana') } }) });
    expect(made.status).toBe(201);
  });
  afterAll(() => server.close());

  it('answers 403 to a key that may not read it, and 405 to a write by one that may, without the body', async () => {
    expect(await before(server.base, path, 'POST', keyOf('ana'))).toBe('HTTP/1.1 403 Forbidden');
    expect(await before(server.base, path, 'PUT', adminKey)).toBe('HTTP/1.1 405 Method Not Allowed');
    // A read by an administrator is served as before.
    expect((await server.fetch(`${server.base}${path}?limit=1`)).status).toBe(200);
  });

  it('answers 405 for a method a subresource does not serve, and 404 for a subresource there is not, without the body', async () => {
    const api = '/kubernetes/management/apis/management.service/v1';
    expect(await before(server.base, `${api}/accessrequests/r1/approval`, 'PATCH', adminKey, 3000, 'application/apply-patch+yaml')).toBe('HTTP/1.1 405 Method Not Allowed');
    expect(await before(server.base, `${api}/ownedaccesskeys/ana-key/rotation`, 'PUT', adminKey)).toBe('HTTP/1.1 405 Method Not Allowed');
    expect(await before(server.base, `${api}/teams/t1/accesskeys`, 'POST', adminKey)).toBe('HTTP/1.1 405 Method Not Allowed');
    expect(await before(server.base, `${api}/teams/t1/nothing`, 'POST', adminKey)).toBe('HTTP/1.1 404 Not Found');
  });

  it('answers 415 to a media type the method does not take, after the key is judged, without the body', async () => {
    const api = '/kubernetes/management/apis/management.service/v1';
    expect(await before(server.base, `${api}/teams`, 'POST', adminKey, 3000, 'text/plain')).toBe('HTTP/1.1 415 Unsupported Media Type');
    expect(await before(server.base, `${api}/teams/t1`, 'PATCH', adminKey, 3000, 'application/strategic-merge-patch+json')).toBe('HTTP/1.1 415 Unsupported Media Type');
    expect(await before(server.base, `${api}/teams/t1/status`, 'PATCH', adminKey, 3000, 'application/apply-patch+yaml')).toBe('HTTP/1.1 415 Unsupported Media Type');
    expect(await before(server.base, `${api}/ownedaccesskeys/ana-key/rotation`, 'POST', adminKey, 3000, 'application/merge-patch+json')).toBe('HTTP/1.1 415 Unsupported Media Type');
    // The key first: a caller who may not write learns nothing from the media type.
    expect(await before(server.base, `${api}/teams/t1`, 'PUT', keyOf('ana'), 3000, 'text/plain')).toMatch(/^HTTP\/1.1 (403|404) /);
    // A method the route does not serve stays a 405, whatever the body's type.
    expect(await before(server.base, `${api}/teams/t1`, 'POST', adminKey, 3000, 'text/plain')).toBe('HTTP/1.1 405 Method Not Allowed');
    // A media type the method takes still waits for its body.
    expect(await before(server.base, `${api}/teams`, 'POST', adminKey, 500, 'application/yaml')).toBe('no answer');
    // Its Status names what it takes.
    const res = await server.fetch(`${server.api}/teams/t1`, { method: 'PATCH', headers: { 'Content-Type': 'application/strategic-merge-patch+json' }, body: '{}' });
    expect(res.status).toBe(415);
    const status = (await res.json()) as { reason: string; message: string };
    expect(status.reason).toBe('UnsupportedMediaType');
    expect(status.message).toContain('application/merge-patch+json');
  });

  it('a DELETE whose chunks turn out empty is judged by the body it has, as before: no 415 from its Content-Type', async () => {
    const api = '/kubernetes/management/apis/management.service/v1';
    for (const [name, type] of [['chunked-a', 'text/plain'], ['chunked-b', undefined]] as const) {
      expect((await server.fetch(`${server.api}/teams`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ metadata: { name } }) })).status).toBe(201);
      const status = await new Promise<string>((resolve) => {
        const url = new URL(server.base);
        const socket = connect(Number(url.port), url.hostname);
        socket.once('data', (d: Buffer) => (socket.destroy(), resolve(d.toString().split('\r\n')[0]!)));
        socket.write(`DELETE ${api}/teams/${name} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${adminKey}\r\n${type ? `Content-Type: ${type}\r\n` : ''}Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n`);
      });
      expect(status, String(type)).toBe('HTTP/1.1 200 OK');
    }
  });

  it("names the route's own limit in a 413: 64 KiB on the anonymous token exchange, 3 MiB on the API", async () => {
    const token = await fetch(`${server.base}/auth/token`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: 'x'.repeat(65 * 1024) });
    expect(token.status).toBe(413);
    expect(((await token.json()) as { message: string }).message).toBe('Request entity too large: the request body is larger than the limit of 65536 bytes');
    const api = await server.fetch(`${server.api}/teams`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: 'x'.repeat(3 * 1024 * 1024 + 1) });
    expect(api.status).toBe(413);
    expect(((await api.json()) as { message: string }).message).toBe('Request entity too large: the request body is larger than the limit of 3145728 bytes');
  });

  it('answers 405 to a self-subject review that is not a create, without the body or its YAML decoded', async () => {
    for (const [group, kind] of [['authentication.k8s.io', 'selfsubjectreviews'], ['authorization.k8s.io', 'selfsubjectaccessreviews'], ['authorization.k8s.io', 'selfsubjectrulesreviews']]) {
      expect(await before(server.base, `/kubernetes/management/apis/${group}/v1/${kind}`, 'PUT', keyOf('ana'), 3000, 'application/yaml')).toBe('HTTP/1.1 405 Method Not Allowed');
    }
  });
});
