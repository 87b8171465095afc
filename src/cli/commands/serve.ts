/** `teamkeys serve`: its flags; what it runs is in serve-run.ts, loaded only when it runs. */
import type { Command } from 'commander';
import { defaultGroup } from '../../api/resources.js';
import { defaultActivityIntervalMs } from '../../auth/activity.js';
import { defaultExpiredKeyRetentionSeconds } from '../../auth/expired-keys.js';
import { defaultWarnExpiryMs } from '../../auth/key-health.js';
import { formatDuration } from '../../duration.js';
import { defaultAuditRetentionMs } from '../../server/audit/audit-recorder.js';
import { defaultFailureLimit } from '../../server/auth/auth-context.js';
import { defaultAnonymousBodyLimits } from '../../server/auth/anonymous-bodies.js';
import { defaultMaxKeysPerUser } from '../../server/key-quota.js';
import { defaultGitHubKeysUrl } from '../../server/leaks/github-keys.js';
import { defaultRequestTimeoutMs, maxHeadersTimeoutMs } from '../../server/request-timeouts.js';
import { defaultShutdownGraceMs } from '../../server/shutdown.js';
import { defaultLeaseTtlMs } from '../../store/lease.js';
import { defaultMaxWatches, defaultMaxWatchesPerKey, defaultMaxWatchesPerUser, defaultMinRequestTimeoutSeconds } from '../../server/watch/watch-limits.js';
import { addDaemonFlags, type SidecarFlags } from '../daemon-setup.js';
import { addFlags, logFormatHelp, type FlagSpec, type OptionsOf } from '../flag-specs.js';
import { addSignInFlags, type SignInFlags } from '../signin-flags.js';
import { serveStoreHelp, storeFlag } from '../store-flags.js';

/** Time flags that took seconds before durations: a bare number still reads as seconds. */
const seconds = ' (a duration like 90s, 15m, 20d; a bare number is seconds)';

/** The server's own flags (besides sign-in's and the sidecar's), declared once: ServeFlags is derived from them. */
export const serveFlags = [
  { name: 'listen', arg: '<host:port>', help: 'address to listen on; port 0 picks a free one', default: '127.0.0.1:8080' },
  { ...storeFlag, help: serveStoreHelp },
  { name: 'state-dir', arg: '<dir>', help: 'where everything the server keeps goes: the SQLite store (unless --store), the encryption key file, the administrator key, the self-signed certificate, a kubeconfig, the sidecar\'s mirrors, keys and reports', default: '.teamkeys' },
  { name: 'start-empty', help: 'start on an empty store even where the state directory says a SQLite store existed (it was removed or moved); without it the server refuses to start' },
  { name: 'tls-cert', arg: '<file>', help: 'PEM certificate to serve HTTPS with (default: a self-signed one in the state directory)' },
  { name: 'tls-key', arg: '<file>', help: 'PEM private key for --tls-cert' },
  { name: 'insecure-http', help: 'serve plain HTTP (behind a TLS-terminating proxy); kubectl sends no key over plain HTTP' },
  { name: 'log-level', arg: '<level>', help: 'trace, debug, info, warn, error', default: 'info' },
  { name: 'log-format', arg: '<format>', help: logFormatHelp },
  { name: 'api-group', arg: '<group>', help: 'API group to serve the kinds under', default: defaultGroup },
  { name: 'encryption-key-file', arg: '<file>', help: 'keys that encrypt connectorData and OIDC tokens at rest (default: <state-dir>/encryption.yaml, made 0600 on first start)' },
  { name: 'max-ttl', arg: '<duration>', help: `refuse access keys that live longer (or forever)${seconds}` },
  { name: 'activity-interval', arg: '<duration>', help: `how often a key's status.lastActivity may be written${seconds}`, default: String(defaultActivityIntervalMs / 1000) },
  {
    name: 'auth-failure-limit',
    arg: '<burst/per-second>',
    help: 'failed authentications a client address may make at once, and how fast that budget refills; then 429 (or "off")',
    default: `${defaultFailureLimit.burst}/${defaultFailureLimit.perSecond}`,
  },
  {
    name: 'max-anonymous-bodies-per-address',
    arg: '<n>',
    help: "request bodies one client address may be sending at once without a key (sign-in, token exchange, leak reports, webhooks; an IPv6 /64 holds 4 addresses' share, a /48 16); one more is answered 429. Behind a proxy every client shares the proxy's address",
    default: String(defaultAnonymousBodyLimits.perClient),
  },
  {
    name: 'max-anonymous-body-bytes',
    arg: '<bytes>',
    help: "bytes of request bodies the server holds while receiving them from clients without a key, for forms and for webhooks each, counted as they arrive; more is answered 429 (like 32Mi, 1Gi, or bytes; at least 3Mi)",
    default: `${defaultAnonymousBodyLimits.totalBytes / 1024 / 1024}Mi`,
  },
  { name: 'request-timeout', arg: '<duration>', help: `time a client has to send its whole request (headers within ${maxHeadersTimeoutMs / 1000} s); then 408${seconds}`, default: String(defaultRequestTimeoutMs / 1000) },
  { name: 'audit-log', arg: '<file>', help: 'also append every audit event (who wrote what, when) to this file as JSON lines' },
  { name: 'audit-retention', arg: '<duration>', help: 'keep audit events this long (like 90d, 12h)', default: formatDuration(defaultAuditRetentionMs) },
  { name: 'max-keys-per-user', arg: '<n>', help: 'access keys one user (or team, or subject) may have; one more is answered 403 exceeded quota', default: String(defaultMaxKeysPerUser) },
  { name: 'max-watches-per-key', arg: '<n>', help: 'watches one access key may hold open at once; one more is answered 429', default: String(defaultMaxWatchesPerKey) },
  { name: 'max-watches-per-user', arg: '<n>', help: 'watches one user (or team, or subject) may hold open at once over all its keys; one more is answered 429', default: String(defaultMaxWatchesPerUser) },
  { name: 'max-watches', arg: '<n>', help: 'watches the server holds open at once for everyone; one more is answered 429', default: String(defaultMaxWatches) },
  {
    name: 'min-request-timeout',
    arg: '<duration>',
    help: `a watch ends after a random time between this and twice this (or sooner, when its timeoutSeconds asks), as kube-apiserver does${seconds}`,
    default: String(defaultMinRequestTimeoutSeconds),
  },
  {
    name: 'lease-duration',
    arg: '<duration>',
    help: `replicas sharing a store: how long the background-work lease outlives its holder's last renewal (renewed every fifth of it); a paused or cut-off leader is replaced within it${seconds}`,
    default: String(defaultLeaseTtlMs / 1000),
  },
  { name: 'shutdown-grace', arg: '<duration>', help: `after SIGTERM, time in-flight requests and watches get to finish before their connections are cut${seconds}`, default: String(defaultShutdownGraceMs / 1000) },
  { name: 'expired-key-retention', arg: '<duration>', help: `delete expired keys this long after they expired${seconds}`, default: String(defaultExpiredKeyRetentionSeconds) },
  { name: 'warn-expiry', arg: '<duration>', help: 'log a warning once per access key as it comes this close to expiring (like 14d, 12h)', default: formatDuration(defaultWarnExpiryMs) },
  {
    name: 'disable-unused-after',
    arg: '<duration>',
    help: 'disable access keys (Login keys too) last used, or never used and created, longer ago than this (like 90d), with the reason in the management.service/disabled-reason annotation and the audit trail; never the last working management-admin key (default: off)',
  },
  {
    name: 'github-secret-scanning-keys-url',
    arg: '<url>',
    help: "where the public keys that sign GitHub's secret scanning alerts (POST /auth/secret-scanning/github) are fetched; fetched when an alert comes, cached for an hour",
    default: defaultGitHubKeysUrl,
  },
  { name: 'notifications', arg: '<file>', help: 'owner notifications: the receivers and routes file kept in Git (docs/notifications.md); checked at start, a problem stops the server at its file:line:col' },
] as const satisfies readonly FlagSpec[];

/** Everything `teamkeys serve` is given: its own flags, sign-in's, and the sidecar's (`--sync-*`). */
export type ServeFlags = OptionsOf<typeof serveFlags> & SignInFlags & SidecarFlags;

export function registerServe(program: Command): void {
  const serve = addFlags(program.command('serve').description('run the management API server (kubectl and client libraries talk to it)'), serveFlags);
  addSignInFlags(serve);
  // The sidecar: every flag of teamkeys watch that is about the source and the sync, as --sync-*.
  addDaemonFlags(serve, 'sync-').action(async (flags: ServeFlags) => {
    // The server (fastify, the stores and their drivers) loads only when serve runs.
    await (await import('./serve-run.js')).serve(flags);
  });
}
