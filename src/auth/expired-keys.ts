/** Deletes keys that expired longer ago than the retention period (default 20 days). */
import type { OwnedAccessKey } from '../api/types.js';
import type { ResourceRegistry } from '../registry/resource-registry.js';
import { lostRace } from '../registry/storage-errors.js';
import type { ActivityRecorder } from './activity.js';
import { expiresAt } from './expiry.js';

export const defaultExpiredKeyRetentionSeconds = 20 * 24 * 3600;

export async function removeExpiredKeys(keys: ResourceRegistry, activity: ActivityRecorder, now: Date, retentionSeconds: number): Promise<string[]> {
  const removed: string[] = [];
  const expired: OwnedAccessKey[] = [];
  // Only keys whose stored expiry is past the retention can be (a use in memory only moves it later).
  for (const o of await keys.dueBy('expiry', now.getTime() - retentionSeconds * 1000)) {
    const key = o as OwnedAccessKey;
    const at = expiresAt(key, activity.lastUsed(key.metadata.name!));
    if (at !== undefined && now.getTime() >= at + retentionSeconds * 1000) expired.push(key);
  }
  for (const key of expired) {
    const name = key.metadata.name!;
    const expires = expiresAt(key, activity.lastUsed(name));
    if (expires === undefined || now.getTime() < expires + retentionSeconds * 1000) continue;
    try {
      await keys.delete(name, { preconditions: { uid: key.metadata.uid!, resourceVersion: key.metadata.resourceVersion! } });
      activity.forget(name);
      removed.push(name);
    } catch (err) {
      // Changed or gone meanwhile: the next round decides again. Anything else is the caller's to log.
      if (!lostRace(err)) throw err;
    }
  }
  return removed;
}
