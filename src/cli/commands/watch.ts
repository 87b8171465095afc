import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import Fastify, { type FastifyInstance } from 'fastify';
import pino from 'pino';
import { CountingClient } from '../../daemon/counting-client.js';
import { SyncDaemon } from '../../daemon/daemon.js';
import { DaemonMetrics } from '../../daemon/metrics.js';
import { registerDaemonRoutes } from '../../daemon/routes.js';
import { parseDuration } from '../duration.js';
import { addGitopsFlags, count, openClient, sourceOptions, type GitopsFlags } from '../gitops-flags.js';
import { parseListen, urlHost } from '../listen.js';
import { addPolicyFlag, type WorkflowFlags } from '../workflow-flags.js';
import { redactPaths } from './serve.js';

interface WatchFlags extends GitopsFlags, WorkflowFlags {
  interval: string;
  listen: string;
  webhookSecretFile?: string;
  selfHeal?: boolean;
  logLevel: string;
}

export async function readSecret(file: string | undefined): Promise<string | undefined> {
  return file ? (await readFile(file, 'utf8')).trim() : undefined;
}

export function registerWatch(program: Command): void {
  addPolicyFlag(addGitopsFlags(program.command('watch').description('keep reconciling: on an interval, on a webhook, on file changes and on drift')))
    .option('--interval <duration>', 'time between reconciles (with 10% jitter)', '30s')
    .option('--listen <host:port>', 'address for /healthz, /readyz, /metrics and the POST /sync webhook', '127.0.0.1:9090')
    .option('--webhook-secret-file <file>', 'GitHub webhook secret: POST /sync must then carry a valid X-Hub-Signature-256')
    .option('--self-heal', 'revert drift (without it, drift is only reported)')
    .option('--log-level <level>', 'trace, debug, info, warn, error', 'info')
    .action(async (f: WatchFlags) => {
      const listen = parseListen(f.listen);
      const intervalMs = parseDuration('--interval', f.interval);
      const log = pino({ level: f.logLevel, redact: { paths: redactPaths, censor: '[redacted]' } }, pino.destination(2));
      const metrics = new DaemonMetrics();
      const client = new CountingClient(await openClient(f), metrics);
      const webhookSecret = await readSecret(f.webhookSecretFile);
      const daemon = new SyncDaemon({
        source: sourceOptions(f),
        client,
        intervalMs,
        selfHeal: f.selfHeal === true,
        prune: f.prune === true,
        allowEmpty: f.allowEmpty === true,
        maxPrune: count('--max-prune', f.maxPrune),
        concurrency: count('--concurrency', f.concurrency, 1),
        ...(f.keyDir ? { keyDir: f.keyDir } : {}),
        ...(f.reportDir ? { reportDir: f.reportDir } : {}),
        ...(f.policy ? { policyDir: f.policy } : {}),
        metrics,
        log,
      });
      const app = Fastify({ loggerInstance: log, disableRequestLogging: true, bodyLimit: 1024 * 1024 }) as unknown as FastifyInstance;
      app.removeAllContentTypeParsers();
      app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
      registerDaemonRoutes(app, daemon, metrics, { health: true, ...(webhookSecret ? { webhookSecret } : {}) });
      await app.listen({ host: listen.host, port: listen.port });
      const address = app.server.address();
      const port = typeof address === 'object' && address ? address.port : listen.port;
      console.log(`teamkeys watch: syncing ${f.source} to ${client.target} every ${f.interval}${f.selfHeal ? ', reverting drift' : ', reporting drift'}`);
      console.log(`teamkeys watch listening on http://${urlHost(listen.host)}:${port}`);
      daemon.start();
      await new Promise<void>((done) => {
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
    });
}
