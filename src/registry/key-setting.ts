/**
 * A key-setting write: one after which whoever wrote it can use the key. It sets a value (a
 * create, a rotation, a PUT or patch of spec.key) or enables a disabled key again (a value its
 * writer may have read before it was disabled works once more). Admission judges such a write as
 * making the key anew (escalation, the failure budget) and ties the key to the writer's sign-in
 * (sign-in-tie.ts), whatever the verb: this is the one place that says which writes those are.
 */
import { reEnables } from '../api/re-enable.js';
import type { KubeObject } from '../api/types.js';

export function isKeySetting(old: KubeObject | undefined, next: KubeObject, revealedKey: string | undefined): boolean {
  if (next.kind !== 'OwnedAccessKey') return false;
  return revealedKey !== undefined || reEnables(old, next);
}
