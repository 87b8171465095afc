/** Canonical encoding: sorted keys, no resourceVersion (the revision is stored beside the value). */
import { canonicalJson } from '../api/canonical-json.js';
import type { StoredObject } from './types.js';
import { StorageError } from './errors.js';

/**
 * The most an object may take stored: the request body limit (kube-apiserver's 3 MiB), so that
 * whatever is stored can be read and sent back whole in a PUT. The server's own additions count:
 * managedFields above all, which grow with each field manager that applies (found by a review: 40
 * managers applying the same 1,000 labels made a 13 MB key, and every write of it O(managers)).
 * kube-apiserver's bound is etcd's request limit, 1.5 MiB.
 */
export const maxStoredObjectBytes = 3 * 1024 * 1024;

/** How far past the bound the server's own writes may go. */
const serverSlack = 4096;

/**
 * `value` (the encoded object), or the store's TooLarge error when it is over maxStoredObjectBytes.
 * Past the bound only: the server's own writes (`serverWrite`: a leaked key's disabling, whoever
 * holds it having padded it to the bound; status, a deletion starting, a rotation, the collector's
 * and the sweeps'), up to 4 KiB past it, a fixed ceiling, so that no client write can build on what
 * they add (the next client write must come back under the bound); and an object stored over the
 * bound and that ceiling before the bound existed (`stored`, its encoded text), which a client
 * write may keep or shrink and a server write grow by 4 KiB. Two reviews found writes that stepped
 * past the bound a few kilobytes at a time.
 */
export function boundedSize(key: string, value: string, obj: StoredObject, stored?: string, serverWrite = false): string {
  // Characters never outnumber UTF-8 bytes: only a long text is measured in bytes.
  if (value.length * 3 <= maxStoredObjectBytes) return value;
  const bytes = Buffer.byteLength(value);
  if (bytes <= maxStoredObjectBytes) return value;
  const storedBytes = stored === undefined ? 0 : Buffer.byteLength(stored);
  const before = storedBytes > maxStoredObjectBytes + serverSlack;
  if (serverWrite && bytes <= (before ? storedBytes : maxStoredObjectBytes) + serverSlack) return value;
  if (before && bytes <= storedBytes) return value;
  const managed = Buffer.byteLength(JSON.stringify((obj.metadata as { managedFields?: unknown } | undefined)?.managedFields ?? []));
  return tooLargeToStore(key, bytes, managed);
}

function tooLargeToStore(key: string, bytes: number, managed: number): never {
  throw new StorageError(
    'TooLarge',
    key,
    `the object would be stored as ${bytes} bytes, more than the limit of ${maxStoredObjectBytes}; its managedFields take ${managed} of them${managed > bytes / 4 ? ' (a PATCH setting metadata.managedFields to [{}] clears them)' : ''}`,
  );
}

/**
 * Encodes an object so that equal objects give equal bytes, which is how an update that changes
 * nothing is recognized and skipped.
 */
export function encodeObject(obj: StoredObject): string {
  const { resourceVersion: _rv, ...metadata } = obj.metadata ?? {};
  return canonicalJson({ ...obj, metadata });
}

export function decodeObject<T extends StoredObject>(value: string, revision: number): T {
  const obj = JSON.parse(value) as T;
  obj.metadata = { ...(obj.metadata ?? {}), resourceVersion: String(revision) };
  return obj;
}
