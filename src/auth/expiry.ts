/** When an access key stops working: ttl seconds after creation, or after its last use. */
import type { OwnedAccessKey } from '../api/types.js';

/** A stored time as epoch ms; undefined when no date parser reads it (absent, or a leap second the schema's date-time admits). */
function instant(s: unknown): number | undefined {
  const t = typeof s === 'string' ? Date.parse(s) : NaN;
  return Number.isFinite(t) ? t : undefined;
}

/**
 * Epoch milliseconds after which the key is expired; undefined when it never expires. Fails
 * closed: a NaN here would compare false with every time, and the key would never expire (nor be
 * found by the expiry index, which holds finite instants). So a creation time that does not parse
 * counts from the epoch, a last activity that does not parse counts for nothing, and a ttl that is
 * not a number (written past the API) lasts no time at all.
 */
export function expiresAt(key: OwnedAccessKey, lastUseMs?: number): number | undefined {
  const ttl: unknown = key.spec?.ttl ?? 0;
  if (!ttl) return undefined;
  let base = instant(key.metadata.creationTimestamp) ?? 0;
  if (key.spec?.ttlAfterLastActivity) base = Math.max(base, instant(key.status?.lastActivity) ?? 0, Number.isFinite(lastUseMs) ? lastUseMs! : 0);
  return typeof ttl === 'number' && Number.isFinite(ttl) ? base + ttl * 1000 : base;
}
