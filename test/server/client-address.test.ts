/**
 * Per-address budgets count an IPv6 client by its /64 (src/server/client-address.ts): one host is
 * handed a /64 at least, and counted by the full address it had a fresh budget for each of 2^64
 * addresses. IPv4, and IPv4 mapped into IPv6 on a dual-stack socket, count as the address.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { budgetKey } from '../../src/server/client-address.js';
import { startInProcess, type InProcess } from '../support/in-process.js';

const hex = (g: number) => g.toString(16);
/** Textual forms of one IPv6 address: full, zero-padded, upper case, and the canonical compression. */
function spellings(groups: number[]): string[] {
  const full = groups.map(hex).join(':');
  const canonical = new URL(`http://[${full}]/`).hostname.slice(1, -1);
  return [full, groups.map((g) => hex(g).padStart(4, '0')).join(':'), full.toUpperCase(), canonical];
}
const group = fc.integer({ min: 0, max: 0xffff });
/** Mostly zeros, so that `::` runs appear in the canonical spelling. */
const groups = fc.array(fc.oneof(group, fc.constant(0)), { minLength: 8, maxLength: 8 });

describe('the budget key of a peer address', () => {
  it('is the /64 of an IPv6 address, however it is spelled', () => {
    fc.assert(
      fc.property(groups, (g) => {
        fc.pre(!(g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff));
        const want = `${g.slice(0, 4).map(hex).join(':')}::/64`;
        for (const text of spellings(g)) expect(budgetKey(text), text).toBe(want);
      }),
      { numRuns: 500 },
    );
  });

  it('tells apart addresses whose /64 differ, and not those that share it', () => {
    fc.assert(
      fc.property(groups, groups, (a, b) => {
        fc.pre(!(a.slice(0, 5).every((x) => x === 0) && a[5] === 0xffff) && !(b.slice(0, 5).every((x) => x === 0) && b[5] === 0xffff));
        const same = a.slice(0, 4).every((x, i) => x === b[i]);
        expect(budgetKey(spellings(a)[3]!) === budgetKey(spellings(b)[3]!)).toBe(same);
      }),
      { numRuns: 500 },
    );
  });

  it('is the address itself for IPv4, mapped into IPv6 or not', () => {
    fc.assert(
      fc.property(fc.ipV4(), (v4) => {
        expect(budgetKey(v4)).toBe(v4);
        expect(budgetKey(`::ffff:${v4}`)).toBe(v4);
        expect(budgetKey(`::FFFF:${v4}`)).toBe(v4);
      }),
      { numRuns: 300 },
    );
    expect(budgetKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(budgetKey('')).toBe('');
  });
});

describe('failed authentications from one IPv6 /64', () => {
  let server: InProcess;
  beforeAll(async () => {
    // Two failures at once per client, regained only after 1000 s.
    server = await startInProcess({ failureLimit: { burst: 2, perSecond: 0.001 } });
  });
  afterAll(() => server.close());

  const attempt = async (remoteAddress: string) => (await server.inject({ method: 'GET', url: '/kubernetes/management/apis/management.service/v1/teams', headers: { authorization: `Bearer Wrong${'w'.repeat(40)}` }, remoteAddress })).statusCode;

  it('share one budget, whichever address of the /64 they come from; another /64 has its own', async () => {
    expect(await attempt('2001:db8:1:2::1')).toBe(401);
    expect(await attempt('2001:db8:1:2:ffff:ffff:ffff:fffe')).toBe(401);
    expect(await attempt('2001:db8:1:2:1234::9')).toBe(429);
    expect(await attempt('2001:db8:1:3::1')).toBe(401);
  });
});
