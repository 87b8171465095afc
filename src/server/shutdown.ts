/**
 * Closing the server without hanging. Node's server.close() closes the connections idle at that
 * moment, once; a connection still busy then (a watch draining to a slow reader, a request in
 * flight) goes idle later and is kept for the keep-alive timeout (72 s under fastify), and one whose
 * client stops reading never goes idle at all. So while closing, idle connections are closed as
 * they appear, and after the grace period every connection left is cut.
 */
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';

/** How long in-flight requests and watches get to finish after SIGTERM before their connections are cut. */
export const defaultShutdownGraceMs = 10_000;
const sweepMs = 100;

/** Closes the server: waits for in-flight work up to graceMs, then cuts what is left. */
export async function closeGracefully(app: FastifyInstance, opts: { graceMs: number; log: Logger }): Promise<void> {
  const server = app.server;
  const sweep = setInterval(() => server.closeIdleConnections(), sweepMs);
  const deadline = setTimeout(() => {
    server.getConnections((_err, open) => {
      if (open > 0) opts.log.warn({ connections: open, graceMs: opts.graceMs }, 'connections still open after the shutdown grace period; closing them');
      server.closeAllConnections();
    });
  }, opts.graceMs);
  try {
    await app.close();
  } finally {
    clearInterval(sweep);
    clearTimeout(deadline);
  }
}
