/**
 * A TCP proxy on loopback that the test controls, between `teamkeys serve` and PostgreSQL: it
 * forwards every connection, and can cut one on the database's side only, leaving the client's
 * side open and silent, as a stalled network or a dead NAT entry leaves a connection.
 */
import { createServer, connect, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  /** The port clients connect to. */
  port: number;
  /**
   * Cuts the connection whose database-side socket has local port `upstreamPort` (PostgreSQL's
   * pg_stat_activity.client_port): nothing is forwarded either way from now on, a close of the
   * database side is not passed on; the client's socket stays open. False when none matches.
   */
  cutDatabaseSide(upstreamPort: number): boolean;
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number, host = '127.0.0.1'): Promise<TcpProxy> {
  const pairs = new Set<{ client: Socket; upstream: Socket; cut: boolean }>();
  const server: Server = createServer((client) => {
    const upstream = connect(targetPort, host);
    const pair = { client, upstream, cut: false };
    pairs.add(pair);
    client.on('data', (d) => pair.cut || upstream.write(d));
    upstream.on('data', (d) => pair.cut || client.write(d));
    client.on('close', () => {
      pairs.delete(pair);
      upstream.destroy();
    });
    upstream.on('close', () => pair.cut || client.destroy());
    client.on('error', () => {});
    upstream.on('error', () => {});
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    port: (server.address() as { port: number }).port,
    cutDatabaseSide(upstreamPort) {
      for (const pair of pairs) {
        if (pair.upstream.localPort !== upstreamPort) continue;
        pair.cut = true;
        return true;
      }
      return false;
    },
    close: async () => {
      for (const { client, upstream } of pairs) {
        client.destroy();
        upstream.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
