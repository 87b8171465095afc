/**
 * How healthy one access key is at a given time: when it expires, whether that is soon or past,
 * when it was last used (its creation when never used) and for how long it has not been. Pure
 * (a key, an optional last use known in memory, a time): the server's sweep, the reconciler's
 * reports and `teamkeys keys` all decide with it, and it loads nothing but types and expiry.ts,
 * so the CLI can import it without starting slower.
 */
import type { OwnedAccessKey } from '../api/types.js';
import { isLoginKey } from '../api/key-types.js';
import { expiresAt as expiryOf } from './expiry.js';

export const defaultWarnExpiryMs = 14 * 86_400_000;
export const defaultWarnUnusedMs = 90 * 86_400_000;

export interface KeyHealth {
  name: string;
  /** Whom it acts for: the user, `team:<name>`, or the subject. */
  owner: string;
  /** spec.type when set (e.g. Login). */
  type?: string;
  login: boolean;
  disabled: boolean;
  /** When it stops working (epoch ms); undefined when it never expires. */
  expiresAt?: number;
  /** Expired at `now` (it answers 401 "access key expired"). */
  expired: boolean;
  /** Epoch ms of the last use: the latest of status.lastActivity and a use known in memory; else creation. */
  lastUse: number;
  /** No use recorded: lastUse is the creation time. */
  neverUsed: boolean;
  /**
   * No use recorded and no creation time (none the server writes lacks one): lastUse is 0, unused
   * since ever, as the lastUse index holds it. Counted from now instead, the key would be warned
   * about as "disabled at <now + the period>" on every sweep and never be disabled.
   */
  undated?: true;
  /** now - lastUse (ms, never negative). */
  unusedForMs: number;
  /** expiresAt - now (ms; negative once expired); undefined when it never expires. */
  expiresInMs?: number;
}

const parse = (s: string | null | undefined) => {
  const ms = s ? Date.parse(s) : NaN;
  return Number.isFinite(ms) ? ms : undefined;
};

/** The key's owner as messages name it (user, `team:<name>`, or subject). */
export function ownerOf(key: OwnedAccessKey): string {
  const spec = key.spec ?? {};
  if (spec.user) return spec.user;
  if (spec.team) return `team:${spec.team}`;
  return spec.subject ?? '';
}

/**
 * The health of `key` at `now`. `lastUseMs` is a use this process knows of that may not be in
 * status.lastActivity yet (written at most once a minute): the later of the two counts, unless
 * the remembered use is from before the key's creation (then it is an earlier key's, and ignored).
 */
export function keyHealth(key: OwnedAccessKey, now: Date, lastUseMs?: number): KeyHealth {
  const nowMs = now.getTime();
  const recorded = parse(key.status?.lastActivity);
  const createdAt = parse(key.metadata.creationTimestamp);
  // A use remembered from before the key was created is another key's: one of the same name,
  // deleted and made again while the activity recorder was not following deletions. Counted, it
  // would make a new key "unused for" longer than it has existed, and disable it at once.
  const remembered = lastUseMs !== undefined && (createdAt === undefined || lastUseMs >= createdAt) ? lastUseMs : undefined;
  const used = Math.max(recorded ?? -Infinity, remembered ?? -Infinity);
  const neverUsed = !Number.isFinite(used);
  const created = createdAt ?? 0;
  const lastUse = neverUsed ? created : used;
  const expires = expiryOf(key, remembered);
  return {
    name: key.metadata.name ?? '',
    owner: ownerOf(key),
    ...(key.spec?.type ? { type: key.spec.type } : {}),
    login: isLoginKey(key),
    disabled: key.spec?.disabled === true,
    ...(expires !== undefined ? { expiresAt: expires, expiresInMs: expires - nowMs } : {}),
    expired: expires !== undefined && nowMs >= expires,
    lastUse,
    neverUsed,
    ...(neverUsed && createdAt === undefined ? { undated: true as const } : {}),
    unusedForMs: Math.max(0, nowMs - lastUse),
  };
}

/** Not expired yet, but expires within `windowMs` of now. */
export const expiresWithin = (h: KeyHealth, windowMs: number): boolean => h.expiresInMs !== undefined && !h.expired && h.expiresInMs <= windowMs;

/** Last used (or, never used, created) longer than `windowMs` ago. */
export const unusedFor = (h: KeyHealth, windowMs: number): boolean => h.unusedForMs > windowMs;

/** A span for people: 3d, 5h, 12m, 40s (rounded down to the largest whole unit). */
export function formatSpan(ms: number): string {
  const abs = Math.abs(ms);
  for (const [unit, size] of [['d', 86_400_000], ['h', 3_600_000], ['m', 60_000]] as const) if (abs >= size) return `${Math.floor(abs / size)}${unit}`;
  return `${Math.floor(abs / 1000)}s`;
}

/** RFC 3339 without milliseconds, as the API writes times. */
export const isoSeconds = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
