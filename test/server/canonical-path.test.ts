/**
 * canonicalUrl's shortcut for paths already canonical gives what the full computation gives
 * (decode once, resolve `.`, `..` and empty segments, encode each segment again), over generated
 * request targets made of the characters that matter: separators, dots, percent-escapes
 * (well-formed or not), reserved and unreserved characters.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalPath, canonicalUrl, pathOf } from '../../src/server/canonical-path.js';

/** The full computation, as canonical-path.ts defines it. */
function fullComputation(url: string): { url: string; path: string | undefined } {
  const q = url.indexOf('?');
  const [path, query] = q < 0 ? [url, ''] : [url.slice(0, q), url.slice(q)];
  const canonical = canonicalPath(path);
  if (canonical === undefined) return { url, path: undefined };
  return { url: `${canonical.split('/').map((s) => encodeURIComponent(s)).join('/')}${query}`, path: canonical };
}

const piece = fc.constantFrom('/', '//', '.', '..', '/./', '/../', 'a', 'Z', '9', '-', '_', '~', '!', '*', "'", '(', ')', '%', '%2F', '%2f', '%6d', '%2E', '%2e%2E', '%zz', '%E2%82%AC', '€', ' ', '+', ':', '@', ';', '=', '&', '$', ',', 'teams', 'management');
const target = fc.tuple(fc.array(piece, { maxLength: 12 }), fc.option(fc.constantFrom('?watch=1', '?a=%2F&b=..', '?'), { nil: undefined })).map(([parts, query]) => `/${parts.join('')}${query ?? ''}`);

describe('canonicalUrl', () => {
  it('the shortcut for plain paths answers as the full computation, path and rewritten URL alike', () => {
    fc.assert(
      fc.property(target, (url) => {
        const raw: { url: string } = { url };
        const want = fullComputation(url);
        expect(canonicalUrl(raw)).toBe(want.url);
        // The gate reads the path the router was given (request-gate.ts): the same one.
        expect(pathOf(raw)).toBe(want.path);
      }),
      { numRuns: 5000, seed: 20261129 },
    );
  });

  it('plain paths are left as sent; dot segments, empty segments, trailing slashes and escapes are not', () => {
    const cases: [string, string][] = [
      ['/kubernetes/management/apis/management.service/v1/teams/team-000500', '/kubernetes/management/apis/management.service/v1/teams/team-000500'],
      ['/a/.../b', '/a/.../b'],
      ['/a/./b', '/a/b'],
      ['/a/../b', '/b'],
      ['/a//b/', '/a/b'],
      ['/kubernetes/%6danagement/openapi/v2', '/kubernetes/management/openapi/v2'],
      ['/a/b%2Fc', '/a/b/c'],
      ['/a/b c', '/a/b%20c'],
    ];
    for (const [url, want] of cases) expect(canonicalUrl({ url })).toBe(want);
  });
});
