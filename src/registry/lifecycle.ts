/** When a terminating object may finally be removed. */
import type { KubeObject } from '../api/types.js';

/** Deletion requested, no finalizer left, and its grace period over. */
export function isRemovable(obj: KubeObject, now: Date): boolean {
  const meta = obj.metadata;
  if (!meta.deletionTimestamp) return false;
  if ((meta.finalizers ?? []).length > 0) return false;
  return Date.parse(meta.deletionTimestamp) <= now.getTime();
}
