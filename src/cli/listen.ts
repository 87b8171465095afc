/** HOST:PORT for --listen, and whether a host is loopback (plain HTTP is only safe there). */
import { createServer, isIP } from 'node:net';
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

export { isLoopback } from '../client/loopback.js';

/** How to write the host in a URL. */
export function urlHost(host: string): string {
  return isIP(host) === 6 ? `[${host}]` : host;
}

/**
 * Fails with the listen error (EADDRINUSE naming the address) when HOST:PORT cannot be listened on,
 * before serve makes any state (store, administrator key, certificate). Port 0 always can.
 */
export function checkListen({ host, port }: ListenAddress): Promise<void> {
  if (port === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}
