/**
 * `teamkeys serve`, step one of three (config -> assemble -> run): the flags (and environment)
 * turned into a checked ServeConfig. Pure: it reads no file and starts nothing, so every mistake
 * in the command line is refused, with the flag's name, before anything is opened.
 */
import { join, resolve } from 'node:path';
import { defaultActivityIntervalMs } from '../auth/activity.js';
import { formatDuration } from '../duration.js';
import { minAnonymousBodyBytes, type AnonymousBodyLimits } from '../server/auth/anonymous-bodies.js';
import type { FailureLimitOptions } from '../auth/failure-limit.js';
import type { ServeFlags } from './commands/serve.js';
import { daemonSettings, hasSource, type DaemonSettings } from './daemon-setup.js';
import { parseDuration, parseSecondsOrDuration } from './duration.js';
import { encryptionKeyFileName } from './encryption-key-file.js';
import { CliError } from './errors.js';
import { byteSize, wholeNumber } from './flag-values.js';
import { parseListen, type ListenAddress } from './listen.js';
import { logFormat, type LogFormat } from './logging.js';
import { signInSettings, type SignInSettings } from './signin-flags.js';
import { serveStoreUrl } from './store-flags.js';

/** How the server speaks: HTTPS with these PEM files, HTTPS with a certificate made in the state directory, or plain HTTP. */
export type TlsChoice = { kind: 'files'; certFile: string; keyFile: string } | { kind: 'self-signed' } | { kind: 'none' };

/** Everything `teamkeys serve` is built from, checked. */
export interface ServeConfig {
  listen: ListenAddress;
  stateDir: string;
  storeUrl: string;
  /** Serve an empty store where the state directory says one existed (store-record.ts). */
  startEmpty: boolean;
  encryptionKeyFile: string;
  tls: TlsChoice;
  logLevel: string;
  logFormat: LogFormat;
  apiGroup: string;
  /** The administrator key file bootstrap writes, and the key given in TEAMKEYS_ADMIN_KEY instead. */
  adminKeyFile: string;
  adminKey?: string;
  maxTtlSeconds?: number;
  activityIntervalMs: number;
  /** How long the background-work lease outlives its holder's last renewal (--lease-duration). */
  leaseTtlMs: number;
  expiredKeyRetentionSeconds: number;
  authFailureLimit: FailureLimitOptions | false;
  requestTimeoutMs: number;
  keyHealth: { warnExpiryMs: number; disableUnusedAfterMs?: number };
  auditRetentionMs: number;
  auditLogFile?: string;
  /** --notifications: the receivers and routes file (read and checked by assemble). */
  notificationsFile?: string;
  shutdownGraceMs: number;
  maxKeysPerUser: number;
  watchLimits: { maxPerKey: number; maxPerUser: number; maxTotal: number; minRequestTimeoutSeconds: number };
  signIn: SignInSettings;
  /** The sidecar's settings, when --sync-source is given. */
  sync?: DaemonSettings;
  /** --github-secret-scanning-keys-url. */
  gitHubKeysUrl: string;
  /** --max-anonymous-bodies-per-address and --max-anonymous-body-bytes. */
  anonymousBodies: AnonymousBodyLimits;
}

/** BURST/PER_SECOND, e.g. 50/2, or "off". */
function failureLimit(value: string): FailureLimitOptions | false {
  if (value === 'off') return false;
  const m = value.match(/^(\d+)\/(\d+(?:\.\d+)?)$/);
  if (!m || Number(m[1]) < 1 || Number(m[2]) <= 0) {
    throw new CliError(`--auth-failure-limit must be BURST/PER_SECOND (like 50/2) or off, not "${value}"`);
  }
  return { burst: Number(m[1]), perSecond: Number(m[2]) };
}

/** An http(s) URL flag, else a CLI error naming it. */
function httpUrl(flag: string, value: string): string {
  const url = URL.canParse(value) ? new URL(value) : undefined;
  if (url?.protocol !== 'https:' && url?.protocol !== 'http:') throw new CliError(`${flag} must be an http(s) URL, not "${value}"`);
  return url.href;
}

/** A time flag the server keeps in whole seconds: a part of a second counts as a whole one. */
const wholeSeconds = (flag: string, value: string) => Math.ceil(parseSecondsOrDuration(flag, value) / 1000);

function tlsChoice(f: ServeFlags): TlsChoice {
  if (Boolean(f.tlsCert) !== Boolean(f.tlsKey)) throw new CliError('--tls-cert and --tls-key go together');
  if (f.tlsCert && f.insecureHttp) throw new CliError('--insecure-http and --tls-cert exclude each other');
  if (f.tlsCert && f.tlsKey) return { kind: 'files', certFile: f.tlsCert, keyFile: f.tlsKey };
  return f.insecureHttp ? { kind: 'none' } : { kind: 'self-signed' };
}

/** The flags of `teamkeys serve` as a checked config; a bad flag is a CliError naming it. */
/** The shortest --disable-unused-after: a key's use is written at most once a minute (--activity-interval), so a shorter window would disable keys in use. */
const minDisableUnusedAfterMs = 3_600_000;

/**
 * --disable-unused-after as milliseconds: at least an hour, and at least twice --activity-interval.
 * A key's use is written at most once per activity interval, so a key in use through another
 * replica (whose uses the leader only sees once written) can show a last activity almost one
 * interval old; a window under two intervals would let the leader disable a key in use.
 */
export function disableUnusedAfterMs(value: string, activityIntervalMs: number = defaultActivityIntervalMs): number {
  const ms = parseDuration('--disable-unused-after', value);
  if (ms < minDisableUnusedAfterMs) {
    throw new CliError(`--disable-unused-after must be at least 1h (uses are recorded at most once a minute, so a shorter window would disable keys in use), not "${value}"`);
  }
  if (ms < 2 * activityIntervalMs) {
    throw new CliError(
      `--disable-unused-after (${value}) must be at least twice --activity-interval (${formatDuration(activityIntervalMs)}): a key's use is written at most once per interval, so a key in use through another replica could look unused to the leader`,
    );
  }
  return ms;
}

export function serveConfig(f: ServeFlags, env: NodeJS.ProcessEnv = process.env): ServeConfig {
  const listen = parseListen(f.listen);
  const stateDir = resolve(f.stateDir);
  const maxTtlSeconds = f.maxTtl === undefined ? undefined : wholeSeconds('--max-ttl', f.maxTtl);
  const activityIntervalMs = parseSecondsOrDuration('--activity-interval', f.activityInterval);
  const leaseTtlMs = parseSecondsOrDuration('--lease-duration', f.leaseDuration);
  if (leaseTtlMs < 1000) throw new CliError(`--lease-duration must be at least 1s, not "${f.leaseDuration}"`);
  const expiredKeyRetentionSeconds = wholeSeconds('--expired-key-retention', f.expiredKeyRetention);
  const authFailureLimit = failureLimit(f.authFailureLimit);
  const requestTimeoutMs = parseSecondsOrDuration('--request-timeout', f.requestTimeout);
  const keyHealth = {
    warnExpiryMs: parseDuration('--warn-expiry', f.warnExpiry),
    ...(f.disableUnusedAfter !== undefined ? { disableUnusedAfterMs: disableUnusedAfterMs(f.disableUnusedAfter, activityIntervalMs) } : {}),
  };
  const sync = hasSource(f, 'sync-') ? daemonSettings(f, 'sync-', stateDir, { keyDir: join(stateDir, 'keys'), reportDir: join(stateDir, 'sync') }, env) : undefined;
  const shutdownGraceMs = parseSecondsOrDuration('--shutdown-grace', f.shutdownGrace);
  const maxKeysPerUser = wholeNumber('--max-keys-per-user', f.maxKeysPerUser, { above: 0 });
  const watchLimits = {
    maxPerKey: wholeNumber('--max-watches-per-key', f.maxWatchesPerKey, { above: 0 }),
    maxPerUser: wholeNumber('--max-watches-per-user', f.maxWatchesPerUser, { above: 0 }),
    maxTotal: wholeNumber('--max-watches', f.maxWatches, { above: 0 }),
    minRequestTimeoutSeconds: wholeSeconds('--min-request-timeout', f.minRequestTimeout),
  };
  const tls = tlsChoice(f);
  const signIn = signInSettings(f);
  const adminKey = env.TEAMKEYS_ADMIN_KEY || undefined;
  return {
    listen,
    stateDir,
    storeUrl: serveStoreUrl(f.store, stateDir, env),
    startEmpty: f.startEmpty === true,
    encryptionKeyFile: f.encryptionKeyFile ?? join(stateDir, encryptionKeyFileName),
    tls,
    logLevel: f.logLevel,
    logFormat: logFormat(f.logFormat),
    apiGroup: f.apiGroup,
    adminKeyFile: join(stateDir, 'admin.key'),
    ...(adminKey ? { adminKey } : {}),
    ...(maxTtlSeconds ? { maxTtlSeconds } : {}),
    activityIntervalMs,
    leaseTtlMs,
    expiredKeyRetentionSeconds,
    authFailureLimit,
    requestTimeoutMs,
    keyHealth,
    auditRetentionMs: parseDuration('--audit-retention', f.auditRetention),
    ...(f.auditLog ? { auditLogFile: resolve(f.auditLog) } : {}),
    ...(f.notifications ? { notificationsFile: resolve(f.notifications) } : {}),
    shutdownGraceMs,
    maxKeysPerUser,
    watchLimits,
    signIn,
    ...(sync ? { sync } : {}),
    gitHubKeysUrl: httpUrl('--github-secret-scanning-keys-url', f.githubSecretScanningKeysUrl),
    anonymousBodies: {
      perClient: wholeNumber('--max-anonymous-bodies-per-address', f.maxAnonymousBodiesPerAddress, { above: 0 }),
      totalBytes: byteSize('--max-anonymous-body-bytes', f.maxAnonymousBodyBytes, minAnonymousBodyBytes),
    },
  };
}
