/**
 * The Impersonate-* headers are read from the request's raw header pairs, not from Node's
 * `headersDistinct` (built for every header of every request on first use). Generated requests sent
 * to a real node:http server: the raw read gives exactly what `headersDistinct` gives for those
 * headers, whatever their case, order, repetition and the other headers around them.
 */
import { createServer, request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { impersonateHeaders } from '../../src/server/auth/impersonate-headers.js';

describe('Impersonate-* headers read from the raw pairs', () => {
  let seen: (req: IncomingMessage) => void = () => {};
  const server = createServer((req, res) => {
    seen(req);
    res.end();
  });
  beforeAll(() => new Promise<void>((done) => server.listen(0, '127.0.0.1', done)));
  afterAll(() => new Promise<void>((done) => server.close(() => done())));

  const send = (headers: [string, string][]) =>
    new Promise<IncomingMessage>((resolve, reject) => {
      seen = resolve;
      const { port } = server.address() as AddressInfo;
      // An array of pairs: node:http sends each as its own line, repeated names included (and no Host of its own).
      const req = request({ host: '127.0.0.1', port, path: '/', headers: [['Host', 'x'], ...headers].flat() as unknown as Record<string, string> }, (res) => {
        res.resume();
        if (res.statusCode !== 200) reject(new Error(`answered ${res.statusCode} to ${JSON.stringify(headers)}`));
      });
      req.on('error', reject);
      req.setTimeout(2000, () => reject(new Error(`no answer to ${JSON.stringify(headers)}`)));
      req.end();
    });

  const caseOf = (name: string, flips: boolean[]) => [...name].map((c, i) => (flips[i % flips.length] ? c.toUpperCase() : c)).join('');
  const names = ['impersonate-user', 'impersonate-group', 'impersonate-uid', 'impersonate-extra-scopes', 'impersonate-extra-example.com%2fteam', 'impersonat', 'x-impersonate-user', 'accept', 'user-agent', 'i'];

  it('gives what headersDistinct gives for them (generated)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.constantFrom(...names), fc.array(fc.boolean(), { minLength: 1, maxLength: 5 }), fc.stringMatching(/^[a-z0-9:.-]{0,12}$/)), { maxLength: 8 }),
        async (sent) => {
          const req = await send(sent.map(([name, flips, value]) => [caseOf(name, flips), value]));
          const expected = Object.fromEntries(Object.entries(req.headersDistinct).filter(([h]) => h.startsWith('impersonate-')));
          expect({ ...impersonateHeaders(req.rawHeaders) }).toEqual(expected);
          if (Object.keys(expected).length === 0) expect(impersonateHeaders(req.rawHeaders)).toBeUndefined();
        },
      ),
      { numRuns: 100, seed: 20261130 },
    );
  });
});
