/** HOST:PORT for --listen, and whether a host is loopback (plain HTTP is only safe there). */
import { isIP } from 'node:net';
import { CliError } from './errors.js';

export interface ListenAddress {
  host: string;
  port: number;
}

export function parseListen(value: string): ListenAddress {
  const m = value.match(/^\[([^\]]+)\]:(\d+)$/) ?? value.match(/^([^:]+):(\d+)$/);
  if (!m) throw new CliError(`--listen must be HOST:PORT (or [IPv6]:PORT), not "${value}"`);
  const port = Number(m[2]);
  if (port > 65535) throw new CliError(`--listen port ${port} is out of range`);
  return { host: m[1]!, port };
}

export function isLoopback(host: string): boolean {
  if (host === 'localhost' || host === '::1') return true;
  return isIP(host) === 4 && host.startsWith('127.');
}

/** How to write the host in a URL. */
export function urlHost(host: string): string {
  return isIP(host) === 6 ? `[${host}]` : host;
}
