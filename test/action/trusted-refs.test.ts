/**
 * trusted-refs, as data: which refs a trusted event is trusted on (trust.ts). The Action run end
 * to end on a feature branch is in untrusted-events.test.ts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseTrustedRefs, untrustedRef } from '../../src/github-action/trust.js';

const branch = fc.stringMatching(/^[a-z][a-z0-9/_.-]{0,20}$/).filter((b) => !/\.\.|\/\/|\/$|\.lock(\/|$)/.test(b));
const ref = fc.oneof(branch.map((b) => `refs/heads/${b}`), branch.map((b) => `refs/tags/${b}`), fc.constant(''));

describe('which refs a trusted event is trusted on', () => {
  it('by default, only the default branch, on every event; a schedule without a ref passes', () => {
    fc.assert(
      fc.property(fc.constantFrom('push', 'workflow_dispatch', 'release', 'schedule'), ref, branch, (eventName, r, main) => {
        const why = untrustedRef({ eventName, ref: r, defaultBranch: main, trustedRefs: [] });
        const expected = r === `refs/heads/${main}` || (eventName === 'schedule' && r === '');
        expect(why === undefined, `${eventName} ${r} (default ${main}): ${why}`).toBe(expected);
        if (why !== undefined) expect(why).toContain(r || "the run's ref");
      }),
      { numRuns: 500 },
    );
  });

  it('a pattern trusts exactly the refs it begins, a name exactly its branch; never a ref sharing only a prefix of the name', () => {
    fc.assert(
      fc.property(branch, ref, (name, r) => {
        const exact = parseTrustedRefs(name);
        expect(exact).toEqual([`refs/heads/${name}`]);
        expect(untrustedRef({ eventName: 'push', ref: r, defaultBranch: undefined, trustedRefs: exact }) === undefined).toBe(r === `refs/heads/${name}`);
        const prefix = parseTrustedRefs(`${name}/*`);
        expect(untrustedRef({ eventName: 'push', ref: r, defaultBranch: undefined, trustedRefs: prefix }) === undefined).toBe(r.startsWith(`refs/heads/${name}/`));
      }),
      { numRuns: 500 },
    );
    expect(untrustedRef({ eventName: 'push', ref: 'refs/heads/releases', defaultBranch: 'main', trustedRefs: parseTrustedRefs('release/*') })).toBe('refs/heads/releases is not in trusted-refs (refs/heads/release/*)');
    expect(untrustedRef({ eventName: 'push', ref: 'refs/pull/7/merge', defaultBranch: 'main', trustedRefs: parseTrustedRefs('*') })).toBeUndefined();
    expect(untrustedRef({ eventName: 'release', ref: 'refs/tags/v1.2.0', defaultBranch: 'main', trustedRefs: parseTrustedRefs('main, refs/tags/v*') })).toBeUndefined();
    expect(untrustedRef({ eventName: 'push', ref: '', defaultBranch: 'main', trustedRefs: parseTrustedRefs('*') })).toBe("the run's ref (GITHUB_REF is not set) is not in trusted-refs (*)");
  });

  it('refuses what is no ref pattern, naming each', () => {
    for (const bad of ['a*b', '***', 'main..x', 'refs/heads/x~1', 'a:b', 'a\u0000b', 'a[0]', 'a\\b', 'refs/heads/', '/main', 'a//b', 'main@{1}', 'main.lock', 'x.lock/y']) expect(() => parseTrustedRefs(bad), bad).toThrow(/^trusted-refs lists ".*", which are no ref patterns/);
    expect(parseTrustedRefs(' main, refs/tags/v* ,release/*, hotfix/**')).toEqual(['refs/heads/main', 'refs/tags/v*', 'refs/heads/release/*', 'refs/heads/hotfix/*']);
    expect(parseTrustedRefs('')).toEqual([]);
  });
});
