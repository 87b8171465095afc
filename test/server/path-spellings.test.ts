/**
 * Issue 33, generated: every route in the server's router table, spelled every way a path may be
 * spelled (any character percent-encoded, `//`, `/./`, `/x/../`, `%2e`, a trailing slash, a letter
 * in the other case). Without a key, every route but the explicit anonymous list answers 401 (never
 * 200, 404, or 500) and spends the client's failed-authentication budget. With a key, a spelling
 * that means the same path changes nothing the authorizer decides: same status, same message.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anonymousPath } from '../../src/server/auth/request-gate.js';
import { adminKey, startInProcess, type InProcess } from '../support/in-process.js';
import { rawRequest, type RawAnswer } from './raw-path.js';

const prefix = '/kubernetes/management';
let server: InProcess;
let bobKey: string;
let nextAddress = 2;
const freshAddress = () => {
  const n = nextAddress++;
  return `127.1.${n >> 8}.${n & 255}`;
};

/** A route's pattern with its parameters filled in. */
const concrete = (url: string) => url.replace(':resource', 'teams').replace(':name', 'spelled').replace(':subresource', 'status').replace(':namespace', 'default');

interface Spelling {
  encode: number[];
  lowerHex: boolean;
  extras: { at: number; kind: string }[];
  trailing: boolean;
  flipCase: number | null;
}

const spelling: fc.Arbitrary<Spelling> = fc.record({
  encode: fc.array(fc.nat(), { maxLength: 8 }),
  lowerHex: fc.boolean(),
  extras: fc.array(fc.record({ at: fc.nat(), kind: fc.constantFrom('//', '/./', '/x/../', '/%2e/', '/y/%2E%2E/', '/%2F/') }), { maxLength: 3 }),
  trailing: fc.boolean(),
  flipCase: fc.option(fc.nat(), { nil: null }),
});

/** `path` spelled as `s` says; with `sameMeaning`, no case change (a path in another case is another path). */
function spell(path: string, s: Spelling, sameMeaning: boolean): string {
  const tokens = [...path];
  if (!sameMeaning && s.flipCase !== null) {
    const letters = tokens.flatMap((c, i) => (/[a-z]/i.test(c) ? [i] : []));
    const i = letters[s.flipCase % letters.length]!;
    tokens[i] = tokens[i] === tokens[i]!.toLowerCase() ? tokens[i]!.toUpperCase() : tokens[i]!.toLowerCase();
  }
  for (const p of s.encode) {
    const i = 1 + (p % (tokens.length - 1));
    if (tokens[i]!.length !== 1) continue; // encoded once already
    const hex = tokens[i]!.charCodeAt(0).toString(16).padStart(2, '0');
    tokens[i] = `%${s.lowerHex ? hex.toLowerCase() : hex.toUpperCase()}`;
  }
  for (const { at, kind } of s.extras) {
    const slashes = tokens.flatMap((t, i) => (t === '/' ? [i] : []));
    tokens[slashes[at % slashes.length]!] = kind;
  }
  return `${tokens.join('')}${s.trailing ? '/' : ''}`;
}

const run = { numRuns: 150, interruptAfterTimeLimit: 30_000, ...(process.env.TEAMKEYS_TEST_SEED ? { seed: Number(process.env.TEAMKEYS_TEST_SEED) } : {}) };

describe('every route, every spelling', () => {
  let routes: { method: string; path: string }[];

  beforeAll(async () => {
    server = await startInProcess({ audit: true, failureLimit: { burst: 1, perSecond: 0.001 } });
    const created = await server.fetch(`${server.api}/ownedaccesskeys`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ metadata: { name: 'bob-key' }, spec: { user: 'bob' } }) });
    bobKey = ((await created.json()) as { spec: { key: string } }).spec.key;
    // bob may read `spelled`, and nothing else.
    const team = { metadata: { name: 'spelled' }, spec: { access: [{ verbs: ['get'], users: ['bob'] }] } };
    expect((await server.fetch(`${server.api}/teams`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(team) })).status).toBe(201);
    const seen = new Set<string>();
    routes = server.routes.flatMap((r) => {
      const path = concrete(r.url);
      if (seen.has(path) || anonymousPath(path, { signIn: false })) return [];
      seen.add(path);
      return [{ method: r.methods.includes('GET') ? 'GET' : r.methods[0]!, path }];
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('the router table holds the API, discovery, reviews, the audit trail, the listed kinds and /metrics', () => {
    const paths = routes.map((r) => r.path);
    for (const p of [`${prefix}/apis/management.service/v1/teams`, `${prefix}/openapi/v2`, `${prefix}/api/v1/events`, '/metrics', `${prefix}/apis/authorization.k8s.io/v1/selfsubjectaccessreviews`, `${prefix}/apis/audit.management.service/v1/events`]) {
      expect(paths).toContain(p);
    }
    expect(routes.length).toBeGreaterThan(30);
  });

  it('without a key, every route as registered is 401 and spends the budget', async () => {
    for (const r of routes) {
      const from = freshAddress();
      const a = await rawRequest(server.base, r.path, { method: r.method, from });
      expect(a.status, `${r.method} ${r.path}`).toBe(401);
      expect((await rawRequest(server.base, `${prefix}/apis`, { from })).status, `budget after ${r.path}`).toBe(429);
    }
  });

  it('without a key, every spelling of every route is 401 and spends the budget', async () => {
    await fc.assert(
      fc.asyncProperty(fc.nat(), spelling, async (pick, s) => {
        const r = routes[pick % routes.length]!;
        const path = spell(r.path, s, false);
        const from = freshAddress();
        const a = await rawRequest(server.base, path, { method: r.method, from });
        expect(a.status, `${r.method} ${path}`).toBe(401);
        expect((await rawRequest(server.base, `${prefix}/apis`, { from })).status, `budget after ${path}`).toBe(429);
      }),
      run,
    );
  });

  it('with a key, a spelling of the same path gets the answer the route gets, for the administrator and for bob', async () => {
    const same = (a: RawAnswer, b: RawAnswer, route: string, path: string) => {
      expect(a.status, path).toBe(b.status);
      // /metrics counts the requests themselves; everything else is the same document or Status.
      if (route !== '/metrics') expect(a.body, path).toBe(b.body);
    };
    await fc.assert(
      fc.asyncProperty(fc.nat(), spelling, async (pick, s) => {
        const r = routes[pick % routes.length]!;
        const path = spell(r.path, s, true);
        for (const key of [adminKey, bobKey]) {
          const headers = { Authorization: `Bearer ${key}` };
          same(await rawRequest(server.base, path, { method: r.method, headers }), await rawRequest(server.base, r.path, { method: r.method, headers }), r.path, `${r.method} ${path}`);
        }
      }),
      run,
    );
  });
});
