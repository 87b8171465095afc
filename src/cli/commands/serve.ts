import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import pino from 'pino';
import { createRegistry } from '../../registry/registry.js';
import { apiPrefix, buildServer } from '../../server/server.js';
import { openStore } from '../../store/open.js';
import { storeOptionHelp, storeUrl } from '../embedded.js';
import { CliError } from '../errors.js';
import { isLoopback, parseListen, urlHost } from '../listen.js';

interface Options {
  listen: string;
  store?: string;
  tlsCert?: string;
  tlsKey?: string;
  insecureHttp?: boolean;
  logLevel: string;
}

/** Secrets that could reach a log line through a request object are replaced before writing. */
export const redactPaths = ['req.headers.authorization', 'headers.authorization', '*.headers.authorization', 'authorization', 'token', '*.token'];

export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('run the management API server (kubectl and client libraries talk to it)')
    .option('--listen <host:port>', 'address to listen on; port 0 picks a free one', '127.0.0.1:8080')
    .option('--store <url>', storeOptionHelp)
    .option('--tls-cert <file>', 'PEM certificate to serve HTTPS')
    .option('--tls-key <file>', 'PEM private key for --tls-cert')
    .option('--insecure-http', 'allow plain HTTP on a non-loopback address (behind a TLS-terminating proxy)')
    .option('--log-level <level>', 'trace, debug, info, warn, error', 'info')
    .action(async (opts: Options) => {
      const listen = parseListen(opts.listen);
      if (Boolean(opts.tlsCert) !== Boolean(opts.tlsKey)) throw new CliError('--tls-cert and --tls-key go together', 2);
      const https = opts.tlsCert ? { cert: readFileSync(opts.tlsCert), key: readFileSync(opts.tlsKey!) } : undefined;
      if (!https && !isLoopback(listen.host) && !opts.insecureHttp) {
        throw new CliError(
          `refusing to serve plain HTTP on ${listen.host}, which is not a loopback address: access keys would cross the network in clear text. Give --tls-cert and --tls-key, or --insecure-http when a TLS proxy is in front.`,
          2,
        );
      }
      // Logs go to stderr; stdout carries only the line that says where the server is.
      const logger = pino({ level: opts.logLevel, redact: { paths: redactPaths, censor: '[redacted]' } }, pino.destination(2));
      const store = openStore(storeUrl(opts.store));
      const app = await buildServer({ registry: createRegistry(store), logger, ...(https ? { https } : {}) });
      await app.listen({ host: listen.host, port: listen.port });
      const address = app.server.address();
      const port = typeof address === 'object' && address ? address.port : listen.port;
      const url = `${https ? 'https' : 'http'}://${urlHost(listen.host)}:${port}${apiPrefix}`;
      console.log(`teamkeys serving on ${url}`);
      logger.info({ url, store: storeUrl(opts.store).split(':')[0] }, 'serving');

      await new Promise<void>((resolve) => {
        const stop = (signal: string) => {
          logger.info({ signal }, 'shutting down');
          void app
            .close()
            .then(() => store.close())
            .then(resolve, (err: unknown) => {
              logger.error({ err }, 'shutdown failed');
              resolve();
            });
        };
        process.once('SIGTERM', () => stop('SIGTERM'));
        process.once('SIGINT', () => stop('SIGINT'));
      });
    });
}
