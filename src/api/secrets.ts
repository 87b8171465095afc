/**
 * Write-only fields (schema `writeOnly`): access key values, identity.connectorData, oidcLogin
 * tokens. They are moved out of the object into `sealed` before it is stored, the key value only as
 * a SHA-256 hash, the others encrypted (field-cipher.ts), and every read path drops `sealed`, so no
 * API response ever carries them and the database never holds them in plain text.
 */
import { hash } from 'node:crypto';
import type { FieldCipher } from './field-cipher.js';
import { lastAppliedAnnotation } from './last-applied.js';
import { isJsonMap, type KubeObject } from './types.js';

/** The field of a stored object that holds its sealed secrets; never part of the API. */
export const sealedField = 'sealed';

export interface Sealed {
  /** `sha256:<hex>` of spec.key. */
  keyHash?: string;
  /**
   * `sha256:<hex>` of the value spec.key had before its last rotation (key-rotation.ts): it
   * authenticates while status.rotation says so, and is kept after that so the value is refused
   * with a message naming the rotation. Indexed and unique like keyHash.
   */
  previousKeyHash?: string;
  /** Other write-only values by dotted path, e.g. `spec.identity.connectorData`. */
  fields?: Record<string, string>;
}

export type StoredApiObject = KubeObject & { sealed?: Sealed };

const keyPath = 'spec.key';
export function hashKey(key: string): string {
  // The one-shot hash (Node 20.12+): no Hash object per request, a third of the time.
  return `sha256:${hash('sha256', key, 'hex')}`;
}

function parentOf(obj: Record<string, unknown>, path: string[]): Record<string, unknown> | undefined {
  let node: unknown = obj;
  for (const part of path.slice(0, -1)) {
    if (!isJsonMap(node)) return undefined;
    node = node[part];
  }
  return isJsonMap(node) ? node : undefined;
}

/**
 * Removes the write-only fields at `paths` from the object's last-applied record (kubectl's copy of
 * the manifest: last-applied.ts), in place. A record that is not a JSON object is not kubectl's and
 * cannot be cut: it is dropped.
 */
function scrubLastApplied(obj: KubeObject, paths: string[][]): void {
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
    const parent = parentOf(config, path);
    const leaf = path[path.length - 1]!;
    if (parent && leaf in parent) {
      delete parent[leaf];
      cut = true;
    }
  }
  if (cut) annotations[lastAppliedAnnotation] = `${JSON.stringify(config)}\n`;
}

/**
 * Seals the write-only fields of `obj` in place. A field the request leaves out keeps its stored
 * value as long as the object holding it still exists (a read-modify-write cannot see secrets, so
 * it must not erase them). Returns the plaintext key when this request set one, and `rotated` when
 * that replaced the stored value (the caller records the rotation: key-rotation.ts); otherwise the
 * previous value's hash stays as stored.
 */
export function sealSecrets(obj: StoredApiObject, paths: string[][], cipher: FieldCipher, old?: StoredApiObject): { revealedKey?: string; rotated?: boolean } {
  // kubectl's copy of the manifest in an annotation holds the same fields: cut from it too.
  scrubLastApplied(obj, paths);
  // Bound to the object and field, so a ciphertext moved elsewhere does not open.
  const context = (dotted: string) => `${obj.metadata.uid ?? ''}/${dotted}`;
  const sealed: Sealed = {};
  const fields: Record<string, string> = {};
  let revealedKey: string | undefined;
  for (const path of paths) {
    const dotted = path.join('.');
    const parent = parentOf(obj, path);
    const leaf = path[path.length - 1]!;
    const supplied = parent?.[leaf];
    if (parent && leaf in parent) delete parent[leaf];
    if (dotted === keyPath) {
      if (typeof supplied === 'string') {
        revealedKey = supplied;
        sealed.keyHash = hashKey(supplied);
      } else if (parent && old?.sealed?.keyHash) sealed.keyHash = old.sealed.keyHash;
    } else if (typeof supplied === 'string') fields[dotted] = cipher.seal(supplied, context(dotted));
    else if (parent && old?.sealed?.fields?.[dotted] !== undefined) fields[dotted] = cipher.reseal(old.sealed.fields[dotted], context(dotted));
  }
  if (Object.keys(fields).length > 0) sealed.fields = fields;
  const oldHash = old?.sealed?.keyHash;
  const rotated = sealed.keyHash !== undefined && oldHash !== undefined && sealed.keyHash !== oldHash;
  if (!rotated && sealed.keyHash && old?.sealed?.previousKeyHash) sealed.previousKeyHash = old.sealed.previousKeyHash;
  delete obj.sealed;
  if (sealed.keyHash || sealed.fields) obj.sealed = sealed;
  return { ...(revealedKey === undefined ? {} : { revealedKey }), ...(rotated ? { rotated } : {}) };
}

/** The object as the API shows it: a copy without its sealed secrets. */
export function withoutSecrets<T extends KubeObject>(stored: T & { sealed?: Sealed }): T {
  const { sealed: _sealed, ...external } = stored;
  return external as T;
}

/** Whether a dotted field path (as in validation errors) lies on a write-only field. */
export function isSecretPath(paths: string[][], field: string): boolean {
  return paths.some((p) => field === p.join('.') || field.startsWith(`${p.join('.')}.`));
}
