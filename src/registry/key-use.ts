/**
 * The server's record of a key's use in its status: lastActivity, and during a rotation which value
 * was used (status.rotation.lastUsedValue, previousLastActivity). Written through the status
 * subresource as the server (serverStatus): the one writer, besides a rotation, that may change
 * status.rotation. Which value a use was is judged here, on the stored hashes at the time of the
 * write: a rotation between the use and its record does not mislabel it.
 */
import { rotationOf } from '../api/key-rotation.js';
import { withoutSecrets, type StoredApiObject } from '../api/secrets.js';
import { isJsonMap, type KubeObject } from '../api/types.js';
import { timestamp, type RegistryContext } from './context.js';
import { runUpdate } from './update.js';

export interface KeyUse {
  /** The latest use. */
  at: Date;
  /** The hash of the value that made it. */
  hash: string;
  /** The latest use by a value that was the previous one then, if any is remembered. */
  previous?: { at: Date; hash: string };
}

export const activityManager = 'teamkeys-activity';

export function recordKeyUse(ctx: RegistryContext, name: string, use: KeyUse): Promise<KubeObject> {
  return runUpdate(ctx, name, 'patch', { subresource: 'status', serverStatus: true, fieldManager: activityManager }, (current: StoredApiObject) => {
    const next = withoutSecrets(structuredClone(current)) as StoredApiObject;
    const status = isJsonMap(next.status) ? next.status : {};
    status.lastActivity = timestamp(use.at);
    next.status = status;
    const rotation = rotationOf(next);
    const sealed = current.sealed;
    if (rotation && sealed) {
      if (use.hash === sealed.keyHash) rotation.lastUsedValue = 'Current';
      else if (use.hash === sealed.previousKeyHash) rotation.lastUsedValue = 'Previous';
      const prev = use.previous;
      if (prev && prev.hash === sealed.previousKeyHash) {
        const at = timestamp(prev.at);
        if (!rotation.previousLastActivity || rotation.previousLastActivity < at) rotation.previousLastActivity = at;
      }
    }
    return { obj: next, fields: { kind: 'update', manager: activityManager, reset: false } };
  });
}
