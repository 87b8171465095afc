/**
 * The per-request logger is made on first use: a request that logs nothing makes no child logger
 * (pino's redaction of the bindings is the cost), and one that logs writes the same line as a
 * child would: the request id bound, secrets redacted.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { loggerOptions } from '../../src/cli/logging.js';
import { lazyChildLogger } from '../../src/server/request-logger.js';

function capture() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({ write: (chunk, _enc, done) => (lines.push(JSON.parse(String(chunk)) as Record<string, unknown>), done()) });
  const logger = pino(loggerOptions('info'), stream);
  let children = 0;
  const child = logger.child.bind(logger);
  logger.child = ((...args: Parameters<typeof child>) => (children++, child(...args))) as typeof logger.child;
  return { logger, lines, children: () => children };
}

describe('per-request loggers', () => {
  it('make no child logger for a request that logs nothing', () => {
    const { logger, children } = capture();
    const log = lazyChildLogger.call(undefined as never, logger, { reqId: 'req-1' }, {}, undefined as never);
    expect(typeof log.info).toBe('function');
    expect(typeof log.child).toBe('function');
    expect(children()).toBe(0);
  });

  it('log with the request id and redact secrets, like the child they stand for', async () => {
    const { logger, lines, children } = capture();
    const log = lazyChildLogger.call(undefined as never, logger, { reqId: 'req-2' }, {}, undefined as never);
    log.error({ headers: { authorization: 'Bearer SecretKeyValue0123456789abcdefghijkl' } }, 'request failed');
    log.warn('again');
    await new Promise((r) => setImmediate(r));
    expect(children()).toBe(1);
    expect(lines.map((l) => [l.reqId, l.msg])).toEqual([
      ['req-2', 'request failed'],
      ['req-2', 'again'],
    ]);
    expect(JSON.stringify(lines)).not.toContain('SecretKeyValue');
    expect(log.level).toBe('info');
  });
});
