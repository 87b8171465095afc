/**
 * The client a per-address budget counts (failed authentications, device sign-ins, leak reports,
 * unverified scanning alerts, YAML decoding): an IPv4 address as it is, an IPv6 address by its
 * /64. One IPv6 host is handed a /64 at least (a home line, a cloud VM), so counted by the full
 * address a single client could take a fresh budget for each of 2^64 addresses, as
 * rate limiters and abuse lists commonly count IPv6 clients by /64 for this reason.
 */
import { isIPv4, isIPv6 } from 'node:net';
import type { FastifyRequest } from 'fastify';

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

/** The budget's name for a peer address: IPv4 (also when mapped into IPv6) as it is, IPv6 as its /64. */
export function budgetKey(address: string): string {
  const bare = address.replace(/%.*$/, '');
  if (isIPv4(bare)) return bare;
  const groups = groupsOf(bare);
  if (!groups) return address;
  // ::ffff:a.b.c.d is an IPv4 client on a dual-stack socket.
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) return `${groups[6]! >> 8}.${groups[6]! & 0xff}.${groups[7]! >> 8}.${groups[7]! & 0xff}`;
  return `${groups.slice(0, 4).map((g) => g.toString(16)).join(':')}::/64`;
}

/** The budget's name for the request's peer (behind a proxy, every client shares the proxy's). */
export const clientOf = (req: FastifyRequest): string => budgetKey(req.socket.remoteAddress ?? '');
