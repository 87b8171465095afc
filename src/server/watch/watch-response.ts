/** The HTTP side of a watch: the streamed response's head, its lines, and its end once the client has taken them. */
import type { ServerResponse } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';

/** Answers 200 and sends the head at once: a client sees its watch open before the first event. */
export function openStream(res: ServerResponse, warnings: string[] = []): void {
  res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked', ...(warnings.length > 0 ? { Warning: warnings } : {}) });
  res.flushHeaders();
}

/** Writes a line; false when the client has not taken what was written before (wait for `drained`). */
export function writeLine(res: ServerResponse, line: string | Buffer): boolean {
  if (res.destroyed) return true;
  return res.write(line);
}

/**
 * Ends the response once the client has taken what was written. A client that has not within
 * `graceMs` (it stopped reading) has its connection closed: the watch is over, and waiting for it
 * would keep the watch's place (watch-limits.ts) and its buffers for as long as the client likes.
 * The end is written only after the drain: an ended response counts as idle to Node's
 * closeIdleConnections, which a shutdown calls, and would be cut with what it still buffers.
 */
export async function finishStream(res: ServerResponse, graceMs: number, log: FastifyBaseLogger): Promise<void> {
  if (res.destroyed) return;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), graceMs)));
  try {
    if (res.writableNeedDrain && (await Promise.race([drained(res).then(() => false), late]))) {
      log.warn({ graceMs }, 'watch client did not take the end of its watch in time; closing its connection');
      res.destroy();
      return;
    }
  } finally {
    clearTimeout(timer);
  }
  if (!res.destroyed) res.end();
}

/** Waits until the client has taken what was written, or has gone. */
export function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.once('drain', done);
    res.once('close', done);
    // A response already torn down emits neither again.
    if (res.destroyed) done();
  });
}
