/** The one check of a write's preconditions (uid, resourceVersion), with kube-apiserver's wording. */
import { StorageError } from './errors.js';
import type { Preconditions, StoredObject } from './types.js';

/** Throws PreconditionFailed when `current` is not the object the preconditions name. */
export function checkPreconditions(key: string, pre: Preconditions | undefined, current: StoredObject): void {
  if (!pre) return;
  const meta = current.metadata ?? {};
  if (pre.uid !== undefined && pre.uid !== meta.uid) {
    throw new StorageError('PreconditionFailed', key, `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${meta.uid ?? ''}`);
  }
  if (pre.resourceVersion !== undefined && pre.resourceVersion !== meta.resourceVersion) {
    throw new StorageError(
      'PreconditionFailed',
      key,
      `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${meta.resourceVersion ?? ''}`,
    );
  }
}
