/**
 * `teamkeys sync`: asks a running sync daemon (the sidecar of `teamkeys serve --sync-source`, or
 * `teamkeys watch`) to reconcile now, as `flux reconcile` and `argocd app sync` do, instead of
 * `curl -X POST /sync`; by default it waits for that cycle and prints its report.
 */
import type { Command } from 'commander';
import type { SyncFlags } from './sync-run.js';

export function registerSync(program: Command): void {
  program
    .command('sync')
    .description('trigger a sync of a running sidecar or watch daemon, wait for it, and print its report')
    .requiredOption('--server <url>', 'the sidecar (https://host:8080, the API server itself) or a watch daemon (http://127.0.0.1:9090)')
    .option('--token-file <file>', 'an access key of a management admin (or set TEAMKEYS_TOKEN): what the sidecar asks for')
    .option('--ca-file <file>', 'PEM certificate to trust for --server (e.g. .teamkeys/tls/cert.pem)')
    .option('--webhook-secret-file <file>', "sign the request with the daemon's webhook secret instead (X-Hub-Signature-256)")
    .option('--no-wait', 'return once the daemon accepted the request')
    .option('--timeout <duration>', 'how long to wait for the sync to finish', '2m')
    .option('-o, --output <format>', 'text, json, yaml or markdown', 'text')
    .action(async (f: SyncFlags) => {
      process.exitCode = await (await import('./sync-run.js')).sync(f);
    });
}
