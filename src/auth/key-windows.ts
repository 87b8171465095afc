/**
 * "Expiring within" and "unused for": the two windows listings and reports ask of a key. Pure, by
 * a `now` the caller passes (its Clock), so a test steps through days instead of sleeping.
 */
import type { OwnedAccessKey } from '../api/types.js';
import { expiresAt } from './expiry.js';

/** Epoch ms of the key's last use, or of its creation when it was never used; undefined without either. */
export function lastUseOrCreation(key: OwnedAccessKey): number | undefined {
  const used = key.status?.lastActivity ? Date.parse(key.status.lastActivity) : NaN;
  if (Number.isFinite(used)) return used;
  const created = Date.parse(key.metadata.creationTimestamp ?? '');
  return Number.isFinite(created) ? created : undefined;
}

/** How long the key has gone unused at `now` (since its last use, or its creation when never used). */
export function unusedForMs(key: OwnedAccessKey, now: Date): number | undefined {
  const since = lastUseOrCreation(key);
  return since === undefined ? undefined : now.getTime() - since;
}

/** Unused for at least `windowMs` at `now`. */
export function isUnusedFor(key: OwnedAccessKey, now: Date, windowMs: number): boolean {
  const unused = unusedForMs(key, now);
  return unused !== undefined && unused >= windowMs;
}

/**
 * Expires at or before `now + windowMs`. A key already expired (and not yet removed) is within
 * every window: it is the most urgent of the keys one asks about.
 */
export function expiresWithin(key: OwnedAccessKey, now: Date, windowMs: number): boolean {
  const at = expiresAt(key);
  return at !== undefined && at <= now.getTime() + windowMs;
}
