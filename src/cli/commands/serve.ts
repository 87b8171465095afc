/** `teamkeys serve`: its flags; what it runs is in serve-run.ts, loaded only when it runs. */
import type { Command } from 'commander';
import { defaultGroup } from '../../api/resources.js';
import { defaultActivityIntervalMs } from '../../auth/activity.js';
import { defaultExpiredKeyRetentionSeconds } from '../../auth/expired-keys.js';
import { defaultWarnExpiryMs } from '../../auth/key-health.js';
import { formatDuration } from '../../duration.js';
import { defaultAuditRetentionMs } from '../../server/audit/audit-recorder.js';
import { defaultFailureLimit } from '../../server/auth/auth-context.js';
import { defaultMaxKeysPerUser } from '../../server/key-quota.js';
import { defaultRequestTimeoutMs, maxHeadersTimeoutMs } from '../../server/request-timeouts.js';
import { defaultShutdownGraceMs } from '../../server/shutdown.js';
import { defaultMaxWatches, defaultMaxWatchesPerKey, defaultMaxWatchesPerUser, defaultMinRequestTimeoutSeconds } from '../../server/watch-limits.js';
import { addDaemonFlags } from '../daemon-setup.js';
import { logFormatHelp } from '../flag-specs.js';
import { addSignInFlags } from '../signin-flags.js';
import { serveStoreHelp } from '../store-flags.js';
import type { ServeOptions } from './serve-run.js';

export function registerServe(program: Command): void {
  const serve = program
    .command('serve')
    .description('run the management API server (kubectl and client libraries talk to it)')
    .option('--listen <host:port>', 'address to listen on; port 0 picks a free one', '127.0.0.1:8080')
    .option('--store <url>', serveStoreHelp)
    .option('--state-dir <dir>', 'where everything the server keeps goes: the SQLite store (unless --store), the encryption key file, the administrator key, the self-signed certificate, a kubeconfig, the sidecar\'s mirrors, keys and reports', '.teamkeys')
    .option('--tls-cert <file>', 'PEM certificate to serve HTTPS with (default: a self-signed one in the state directory)')
    .option('--tls-key <file>', 'PEM private key for --tls-cert')
    .option('--insecure-http', 'serve plain HTTP (behind a TLS-terminating proxy); kubectl sends no key over plain HTTP')
    .option('--log-level <level>', 'trace, debug, info, warn, error', 'info')
    .option('--log-format <format>', logFormatHelp)
    .option('--api-group <group>', 'API group to serve the kinds under', defaultGroup)
    .option('--encryption-key-file <file>', 'keys that encrypt connectorData and OIDC tokens at rest (default: <state-dir>/encryption.yaml, made 0600 on first start)')
    .option('--max-ttl <seconds>', 'refuse access keys that live longer (or forever)')
    .option('--activity-interval <seconds>', "how often a key's status.lastActivity may be written", String(defaultActivityIntervalMs / 1000))
    .option(
      '--auth-failure-limit <burst/per-second>',
      'failed authentications a client address may make at once, and how fast that budget refills; then 429 (or "off")',
      `${defaultFailureLimit.burst}/${defaultFailureLimit.perSecond}`,
    )
    .option('--request-timeout <seconds>', `time a client has to send its whole request (headers within ${maxHeadersTimeoutMs / 1000} s); then 408`, String(defaultRequestTimeoutMs / 1000))
    .option('--audit-log <file>', 'also append every audit event (who wrote what, when) to this file as JSON lines')
    .option('--audit-retention <duration>', 'keep audit events this long (like 90d, 12h)', formatDuration(defaultAuditRetentionMs))
    .option('--max-keys-per-user <n>', 'access keys one user (or team, or subject) may have; one more is answered 403 exceeded quota', String(defaultMaxKeysPerUser))
    .option('--max-watches-per-key <n>', 'watches one access key may hold open at once; one more is answered 429', String(defaultMaxWatchesPerKey))
    .option('--max-watches-per-user <n>', 'watches one user (or team, or subject) may hold open at once over all its keys; one more is answered 429', String(defaultMaxWatchesPerUser))
    .option('--max-watches <n>', 'watches the server holds open at once for everyone; one more is answered 429', String(defaultMaxWatches))
    .option(
      '--min-request-timeout <seconds>',
      'a watch ends after a random time between this and twice this (or sooner, when its timeoutSeconds asks), as kube-apiserver does',
      String(defaultMinRequestTimeoutSeconds),
    )
    .option('--shutdown-grace <seconds>', 'after SIGTERM, time in-flight requests and watches get to finish before their connections are cut', String(defaultShutdownGraceMs / 1000))
    .option('--expired-key-retention <seconds>', 'delete expired keys this long after they expired', String(defaultExpiredKeyRetentionSeconds))
    .option('--warn-expiry <duration>', 'log a warning once per access key as it comes this close to expiring (like 14d, 12h)', formatDuration(defaultWarnExpiryMs))
    .option(
      '--disable-unused-after <duration>',
      'disable access keys (Login keys too) last used, or never used and created, longer ago than this (like 90d), with the reason in the management.service/disabled-reason annotation and the audit trail; never the last working management-admin key (default: off)',
    );
  addSignInFlags(serve);
  // The sidecar: every flag of teamkeys watch that is about the source and the sync, as --sync-*.
  addDaemonFlags(serve, 'sync-').action(async (opts: ServeOptions) => {
    // The server (fastify, the stores and their drivers) loads only when serve runs.
    await (await import('./serve-run.js')).serve(opts);
  });
}
