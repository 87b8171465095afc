/**
 * The status the server writes itself, as a status write (serverStatus) inside the store's
 * read-modify-write, so two writers racing on two replicas both count and none is lost:
 * - a status computed from the object as stored (an AccessRequest's approvals, phase and expiry);
 * - a key's use: lastActivity, and during a rotation which value was used
 *   (status.rotation.lastUsedValue, previousLastActivity), the one writer besides a rotation that
 *   may change status.rotation. Which value a use was is judged here, on the stored hashes at the
 *   time of the write: a rotation between the use and its record does not mislabel it.
 */
import { rotationOf } from '../api/key-rotation.js';
import { withoutSecrets, type StoredApiObject } from '../api/secrets.js';
import { isJsonMap, type KubeObject } from '../api/types.js';
import { managerOf, present, timestamp, type Admit, type RegistryContext, type Writer } from './context.js';
import { runUpdate } from './update.js';

export interface ServerStatusOptions extends Writer {
  admit?: Admit;
  dryRun?: boolean;
  /** The subresource the audit trail names (the request's), when not status. */
  observedAs?: 'approval';
}

/** Writes `next(current)` as the status of `name`; an unchanged status writes nothing. */
export function writeServerStatus(ctx: RegistryContext, name: string, next: (current: KubeObject) => unknown, opts: ServerStatusOptions = {}): Promise<KubeObject> {
  return runUpdate(ctx, name, 'update', { ...opts, subresource: 'status', serverStatus: true }, (stored) => {
    const current = present(stored);
    return { obj: { ...current, status: next(current) }, fields: { kind: 'update', manager: managerOf(opts), reset: false, ...(opts.observedAs ? { subresource: opts.observedAs } : {}) } };
  });
}

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
