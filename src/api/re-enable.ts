/**
 * The moment an access key was enabled again (spec.disabled true -> false), as the server saw it:
 * the unused-key sweep (server/key-health-sweep.ts) counts a fresh window from it. Only the server
 * writes it: a create drops it, and every other write keeps it as stored, so neither a later write
 * (a scheduled rotation, an edit) nor a user-set annotation moves the window.
 */
import { isJsonMap, type KubeObject } from './types.js';

export const reEnabledAtAnnotation = 'management.service/re-enabled-at';

const disabled = (obj: KubeObject) => (obj.spec as { disabled?: unknown } | undefined)?.disabled === true;

/** RFC 3339 in UTC with second precision, as kube writes metav1.Time. */
const timestamp = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** Whether the write enables a key that was disabled (spec.disabled true -> not true). */
export const reEnables = (old: KubeObject | undefined, next: KubeObject): boolean => old !== undefined && disabled(old) && !disabled(next);

/** Sets the annotation on `next` for a re-enable, else leaves it as `old` had it (absent on a create). */
export function recordReEnable(next: KubeObject, old: KubeObject | undefined, now: Date): void {
  const value = reEnables(old, next) ? timestamp(now.getTime()) : old?.metadata.annotations?.[reEnabledAtAnnotation];
  const annotations = next.metadata.annotations;
  // Anything but a map is left for validation to refuse (422), not spread or searched here.
  if (annotations !== undefined && !isJsonMap(annotations)) return;
  if (value !== undefined) next.metadata.annotations = { ...annotations, [reEnabledAtAnnotation]: value };
  else if (annotations && reEnabledAtAnnotation in annotations) {
    delete annotations[reEnabledAtAnnotation];
    if (Object.keys(annotations).length === 0) delete next.metadata.annotations;
  }
}
