/**
 * Per-address budgets (src/server/client-address.ts): an address spends its own budget and, for
 * IPv6, its /64's (4 addresses' worth) and its /48's (16): one client cannot take a fresh budget
 * for each address of its network, and neighbours on one /64 (the pods of a Kubernetes node, an
 * office LAN) do not share one client's budget. An IPv4 client carried in IPv6 (mapped, SIIT,
 * NAT64, 6to4, Teredo) is that IPv4 client. The first version counted IPv6 by its /64 alone; a
 * review found it made neighbours share one budget, every IPv4 client behind a NAT64 translator
 * share one, and left a /48 holder 65,536 budgets.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { budgetScopes, networkShares } from '../../src/server/client-address.js';
import { startInProcess, type InProcess } from '../support/in-process.js';

const hex = (g: number) => g.toString(16);
/** Textual forms of one IPv6 address: full, zero-padded, upper case, and the canonical compression. */
function spellings(groups: number[]): string[] {
  const full = groups.map(hex).join(':');
  const canonical = new URL(`http://[${full}]/`).hostname.slice(1, -1);
  return [full, groups.map((g) => hex(g).padStart(4, '0')).join(':'), full.toUpperCase(), canonical];
}
const group = fc.integer({ min: 0, max: 0xffff });
/** Mostly zeros, so that `::` runs appear in the canonical spelling; never a form that carries IPv4. */
const groups = fc
  .array(fc.oneof(group, fc.constant(0)), { minLength: 8, maxLength: 8 })
  .filter((g) => !(g.slice(0, 4).every((x) => x === 0) && (g[4] === 0xffff || g[5] === 0xffff)) && !(g[0] === 0x64 && g[1] === 0xff9b) && g[0] !== 0x2002 && !(g[0] === 0x2001 && g[1] === 0));

describe('the budgets of a peer address', () => {
  it('are the address, its /64 and its /48 for IPv6, however it is spelled', () => {
    fc.assert(
      fc.property(groups, (g) => {
        const want = [
          { key: g.map(hex).join(':'), share: 1 },
          { key: `${g.slice(0, 4).map(hex).join(':')}::/64`, share: networkShares[64] },
          { key: `${g.slice(0, 3).map(hex).join(':')}::/48`, share: networkShares[48] },
        ];
        for (const text of spellings(g)) expect(budgetScopes(text), text).toEqual(want);
      }),
      { numRuns: 500 },
    );
  });

  it('share a budget exactly where the addresses share that network', () => {
    fc.assert(
      fc.property(groups, groups, (a, b) => {
        const [x, y] = [budgetScopes(spellings(a)[3]!), budgetScopes(spellings(b)[3]!)];
        expect(x[0]!.key === y[0]!.key).toBe(a.every((v, i) => v === b[i]));
        expect(x[1]!.key === y[1]!.key).toBe(a.slice(0, 4).every((v, i) => v === b[i]));
        expect(x[2]!.key === y[2]!.key).toBe(a.slice(0, 3).every((v, i) => v === b[i]));
      }),
      { numRuns: 500 },
    );
  });

  it('are the IPv4 client alone, as it is or carried in IPv6', () => {
    fc.assert(
      fc.property(fc.ipV4(), (v4) => {
        const [a, b, c, d] = v4.split('.').map(Number) as [number, number, number, number];
        const hi = hex((a << 8) | b);
        const lo = hex((c << 8) | d);
        const carried = [v4, `::ffff:${v4}`, `::FFFF:${v4}`, `::ffff:0:${v4}`, `64:ff9b::${v4}`, `64:ff9b:1:ab::${v4}`, `2002:${hi}:${lo}:1::5`, `2001:0:4136:e378:8000:63bf:${hex(~((a << 8) | b) & 0xffff)}:${hex(~((c << 8) | d) & 0xffff)}`];
        for (const text of carried) expect(budgetScopes(text), text).toEqual([{ key: v4, share: 1 }]);
      }),
      { numRuns: 300 },
    );
    expect(budgetScopes('fe80::1%eth0')[0]).toEqual({ key: 'fe80:0:0:0:0:0:0:1', share: 1 });
    expect(budgetScopes('')).toEqual([{ key: '', share: 1 }]);
  });
});

describe('failed authentications from IPv6 networks', () => {
  let server: InProcess;
  // Two failures at once per address, regained only after 1000 s: 8 per /64, 32 per /48.
  beforeAll(async () => {
    server = await startInProcess({ failureLimit: { burst: 2, perSecond: 0.001 } });
  });
  afterAll(() => server.close());

  const attempt = async (remoteAddress: string) => (await server.inject({ method: 'GET', url: '/kubernetes/management/apis/management.service/v1/teams', headers: { authorization: `Bearer Wrong${'w'.repeat(40)}` }, remoteAddress })).statusCode;

  it('an address past its budget is refused; its neighbour on the /64 is not', async () => {
    expect([await attempt('2001:db8:1:1::a'), await attempt('2001:db8:1:1::a'), await attempt('2001:db8:1:1::a')]).toEqual([401, 401, 429]);
    expect(await attempt('2001:db8:1:1::b')).toBe(401);
  });

  it('fresh addresses of one /64 share its budget of 4 addresses; another /64 has its own', async () => {
    const codes = [];
    for (let i = 1; i <= 8; i++) codes.push(await attempt(`2001:db8:2:2::${hex(i)}`));
    expect(codes).toEqual([401, 401, 401, 401, 401, 401, 401, 401]);
    expect(await attempt('2001:db8:2:2::ff')).toBe(429);
    expect(await attempt('2001:db8:2:3::1')).toBe(401);
  });

  it('fresh /64s of one /48 share its budget of 16 addresses', async () => {
    const codes = new Map<number, number>();
    for (let i = 0; i < 40; i++) {
      const code = await attempt(`2001:db8:3:${hex(0x100 + i)}::1`);
      codes.set(code, (codes.get(code) ?? 0) + 1);
    }
    expect(Object.fromEntries(codes)).toEqual({ 401: 32, 429: 8 });
  });

  it('IPv4 clients behind a NAT64 translator each have their own budget', async () => {
    expect([await attempt('64:ff9b::c633:6407'), await attempt('64:ff9b::c633:6407'), await attempt('64:ff9b::c633:6407')]).toEqual([401, 401, 429]);
    expect(await attempt('64:ff9b::cb00:7109')).toBe(401);
  });
});
