/**
 * kubectl's record of the configuration it last applied: `kubectl apply` (client-side) writes the
 * whole manifest into this annotation, and the server rewrites it after kubectl's server-side apply
 * (registry/server-side-apply.ts). A manifest may set a write-only field (an access key's value),
 * so the record is cut of those fields before anything is stored: kept in it, the value was shown
 * to every reader of the key, in plain text at rest and in old revisions (found by a review).
 */
import { isJsonMap, type KubeObject } from './types.js';

export const lastAppliedAnnotation = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * Removes the write-only fields at `paths` from the object's last-applied record, in place. A
 * record that is not a JSON object is not kubectl's and cannot be cut: it is dropped.
 */
export function scrubLastApplied(obj: KubeObject, paths: readonly (readonly string[])[]): void {
  const annotations = obj.metadata.annotations;
  const text = annotations?.[lastAppliedAnnotation];
  if (!annotations || text === undefined || paths.length === 0) return;
  let config: unknown;
  try {
    config = JSON.parse(text);
  } catch {
    config = undefined;
  }
  if (!isJsonMap(config)) {
    delete annotations[lastAppliedAnnotation];
    return;
  }
  let cut = false;
  for (const path of paths) {
    let node: unknown = config;
    for (const segment of path.slice(0, -1)) node = isJsonMap(node) ? node[segment] : undefined;
    const leaf = path[path.length - 1]!;
    if (isJsonMap(node) && leaf in node) {
      delete node[leaf];
      cut = true;
    }
  }
  if (cut) annotations[lastAppliedAnnotation] = `${JSON.stringify(config)}\n`;
}
