/** What `teamkeys watch` runs: loaded by its action only. */
import { resolve } from 'node:path';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import { registerDaemonRoutes } from '../../daemon/routes.js';
import { buildDaemon } from '../daemon-build.js';
import { daemonConfig } from '../daemon-setup.js';
import { openClient } from '../gitops-flags.js';
import { parseListen, urlHost } from '../listen.js';
import { createLogger, logFormat } from '../logging.js';
import { withoutCredentials } from '../../gitops/source/git-url.js';
import type { WatchFlags } from './watch.js';
import { pathNotFound } from '../../api/errors.js';

/** `teamkeys watch`: reconciles until SIGTERM or SIGINT. */
export async function watch(f: WatchFlags): Promise<void> {
  const listen = parseListen(f.listen);
  const config = await daemonConfig(f, '', resolve(f.stateDir));
  const log = createLogger(f.logLevel, logFormat(f.logFormat));
  const { daemon, metrics, client } = await buildDaemon(config, await openClient(f), log);
  const app = Fastify({ loggerInstance: log, logController: new LogController({ disableRequestLogging: true }), bodyLimit: 1024 * 1024 }) as unknown as FastifyInstance;
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  // A path or method nobody serves is answered from its headers: fastify's not-found route would
  // read the body first, from anyone (this listener has no key to ask for).
  app.addHook('onRequest', async (req, reply) => {
    if (req.is404) return reply.code(404).type('application/json').send(JSON.stringify(pathNotFound().toStatus()));
  });
  registerDaemonRoutes(app, daemon, metrics, { health: true, ...(config.webhookSecret ? { webhookSecret: config.webhookSecret } : {}) });
  await app.listen({ host: listen.host, port: listen.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : listen.port;
  // Signals are handled before the address is printed: a stop right after start is clean.
  const stopped = new Promise<void>((done) => {
    const stop = (signal: string) => {
      log.info({ signal }, 'stopping: finishing the write in flight');
      void daemon
        .stop()
        .then(() => app.close())
        .then(() => client.close())
        .then(done, done);
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  console.log(`teamkeys watch: syncing ${withoutCredentials(config.source.source)} to ${client.target} every ${f.interval}${f.selfHeal ? ', reverting drift' : ', reporting drift'}`);
  console.log(`teamkeys watch listening on http://${urlHost(listen.host)}:${port}`);
  daemon.start();
  await stopped;
}
