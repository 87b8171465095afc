/** Whether a host is this machine's loopback: plain HTTP is only safe there. */
import { isIP } from 'node:net';

export function isLoopback(host: string): boolean {
  if (host === 'localhost' || host === '::1') return true;
  return isIP(host) === 4 && host.startsWith('127.');
}

/** Whether a URL is plain http to another machine: what a key or token must never be sent over. */
export function plainHttpElsewhere(url: URL): boolean {
  return url.protocol === 'http:' && !isLoopback(url.hostname.replace(/^\[|\]$/g, ''));
}
