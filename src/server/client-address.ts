/**
 * The budgets a peer address spends (failed authentications, device sign-ins, leak reports,
 * unverified scanning alerts): its own, and for IPv6 its /64 and /48 too, each holding several
 * addresses' share. One host is often handed a /64 (a home line, a cloud VM) and one site a /48, so
 * counted by the address alone a single client could take a fresh budget for each address it
 * picks; counted by the /64 alone, every pod of a Kubernetes node (one /64 per node) or every
 * laptop of an office LAN would share one client's budget. An IPv4 address carried in an IPv6 one
 * (mapped, SIIT, NAT64's well-known and local-use prefixes, 6to4, Teredo) is that IPv4 client: behind a translator,
 * every IPv4 client would otherwise share the translator's /64 (found by a review).
 */
import { isIPv4, isIPv6 } from 'node:net';
import type { FastifyRequest } from 'fastify';
import type { BudgetScope } from '../auth/failure-limit.js';

/** How many addresses' budgets a /64 holds, and a /48. */
export const networkShares = { 64: 4, 48: 16 } as const;

/** The eight 16-bit groups of an IPv6 address (without zone), or undefined when it is not one. */
function groupsOf(address: string): number[] | undefined {
  if (!isIPv6(address)) return undefined;
  let text = address;
  // A trailing dotted quad (::ffff:192.0.2.1, 64:ff9b::192.0.2.1) is two groups.
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const front = parse(head);
  const back = tail === undefined ? [] : parse(tail);
  const groups = tail === undefined ? front : [...front, ...new Array<number>(8 - front.length - back.length).fill(0), ...back];
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : undefined;
}

const v4 = (hi: number, lo: number) => `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
const zeros = (g: number[], from: number, to: number) => g.slice(from, to).every((x) => x === 0);

/** The IPv4 client an IPv6 address carries, if it is one of the forms that carry one. */
function embeddedIPv4(g: number[]): string | undefined {
  if (zeros(g, 0, 5) && g[5] === 0xffff) return v4(g[6]!, g[7]!); // ::ffff:a.b.c.d (mapped)
  if (zeros(g, 0, 4) && g[4] === 0xffff && g[5] === 0) return v4(g[6]!, g[7]!); // ::ffff:0:a.b.c.d (SIIT)
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(g, 2, 6)) return v4(g[6]!, g[7]!); // 64:ff9b::/96 (NAT64)
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) return v4(g[6]!, g[7]!); // 64:ff9b:1::/48 (RFC 8215, local NAT64 /96s)
  if (g[0] === 0x2002) return v4(g[1]!, g[2]!); // 2002:V4::/48 (6to4)
  if (g[0] === 0x2001 && g[1] === 0) return v4(~g[6]! & 0xffff, ~g[7]! & 0xffff); // Teredo: the client's address, inverted
  return undefined;
}

const hex = (g: number[]) => g.map((x) => x.toString(16)).join(':');

/** The budgets the peer `address` spends, narrowest first. */
export function budgetScopes(address: string): BudgetScope[] {
  const bare = address.replace(/%.*$/, '');
  if (isIPv4(bare)) return [{ key: bare, share: 1 }];
  const g = groupsOf(bare);
  if (!g) return [{ key: address, share: 1 }];
  const carried = embeddedIPv4(g);
  if (carried) return [{ key: carried, share: 1 }];
  return [
    { key: hex(g), share: 1 },
    { key: `${hex(g.slice(0, 4))}::/64`, share: networkShares[64] },
    { key: `${hex(g.slice(0, 3))}::/48`, share: networkShares[48] },
  ];
}

/** The peer a request's budgets are counted for (behind a proxy, every client shares the proxy's). */
export const clientOf = (req: FastifyRequest): string => req.socket.remoteAddress ?? '';
