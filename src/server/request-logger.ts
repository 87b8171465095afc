/**
 * Per-request loggers made on first use. fastify makes a child logger for every request, and
 * pino's child runs the bindings through the redaction of secrets (wildcard paths): about 7% of
 * an authenticated GET's CPU, for a logger most requests never write to. The child here is made
 * the first time something logs through it, with the same bindings, so what is logged is the same.
 */
import type { FastifyBaseLogger } from 'fastify';
import type { FastifyChildLoggerFactory } from 'fastify/types/logger.js';

const methods = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent', 'child']);

/** fastify's childLoggerFactory, lazily: the real child exists only once used. */
export const lazyChildLogger: FastifyChildLoggerFactory = (logger, bindings, opts) => {
  let child: FastifyBaseLogger | undefined;
  const real = () => (child ??= logger.child(bindings, opts));
  return new Proxy(logger, {
    get(_target, prop) {
      // fastify checks that the logger has its methods: answered without making the child.
      if (typeof prop === 'string' && methods.has(prop)) return (...args: unknown[]) => (real()[prop as 'info'] as (...a: unknown[]) => unknown)(...args);
      const c = real();
      const value = Reflect.get(c, prop, c) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(c) : value;
    },
  });
};
