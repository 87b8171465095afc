import { resolve } from 'node:path';
import type { Command } from 'commander';
import Fastify, { LogController, type FastifyInstance } from 'fastify';
import { registerDaemonRoutes } from '../../daemon/routes.js';
import { addDaemonFlags, buildDaemon, daemonConfig } from '../daemon-setup.js';
import { addFlags, targetFlags } from '../flag-specs.js';
import { openClient, type TargetFlags } from '../gitops-flags.js';
import { parseListen, urlHost } from '../listen.js';
import { createLogger, logFormat, logFormatHelp } from '../logging.js';

interface WatchFlags extends TargetFlags {
  source?: string;
  interval: string;
  selfHeal?: boolean;
  listen: string;
  logLevel: string;
  logFormat?: string;
  stateDir: string;
}

export function registerWatch(program: Command): void {
  const cmd = program.command('watch').description('keep reconciling: on an interval, on a webhook, on file changes and on drift');
  addFlags(addDaemonFlags(cmd), targetFlags)
    .option('--listen <host:port>', 'address for /healthz, /readyz, /metrics and the POST /sync webhook', '127.0.0.1:9090')
    .option('--state-dir <dir>', 'where git sources are mirrored between cycles', '.teamkeys')
    .option('--log-level <level>', 'trace, debug, info, warn, error', 'info')
    .option('--log-format <format>', logFormatHelp)
    .action(async (f: WatchFlags) => {
      const listen = parseListen(f.listen);
      const config = await daemonConfig(f as unknown as Record<string, unknown>, '', resolve(f.stateDir));
      const log = createLogger(f.logLevel, logFormat(f.logFormat));
      const { daemon, metrics, client } = buildDaemon(config, await openClient(f), log);
      const app = Fastify({ loggerInstance: log, logController: new LogController({ disableRequestLogging: true }), bodyLimit: 1024 * 1024 }) as unknown as FastifyInstance;
      app.removeAllContentTypeParsers();
      app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
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
      console.log(`teamkeys watch: syncing ${config.source.source} to ${client.target} every ${f.interval}${f.selfHeal ? ', reverting drift' : ', reporting drift'}`);
      console.log(`teamkeys watch listening on http://${urlHost(listen.host)}:${port}`);
      daemon.start();
      await stopped;
    });
}
