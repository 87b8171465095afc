/** When an access key stops working: ttl seconds after creation, or after its last use. */
import type { OwnedAccessKey } from '../api/types.js';

/** Epoch milliseconds after which the key is expired; undefined when it never expires. */
export function expiresAt(key: OwnedAccessKey, lastUseMs?: number): number | undefined {
  const ttl = key.spec?.ttl ?? 0;
  if (!ttl) return undefined;
  let base = Date.parse(key.metadata.creationTimestamp ?? '');
  if (key.spec?.ttlAfterLastActivity) {
    const recorded = key.status?.lastActivity ? Date.parse(key.status.lastActivity) : 0;
    base = Math.max(base, recorded, lastUseMs ?? 0);
  }
  return base + ttl * 1000;
}
