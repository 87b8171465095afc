/** JSON patch (RFC 6902, via fast-json-patch) and JSON merge patch (RFC 7386) over plain objects. */
import fastJsonPatch from 'fast-json-patch';
import { ApiError, badRequest, tooLarge } from './errors.js';
import { plainIndices } from './json-patch-index.js';
import { isJsonMap, setField } from './types.js';

export const maxJsonPatchOperations = 10_000;

/**
 * What the `copy` operations of one JSON patch may copy in all: at most this, as kube-apiserver
 * bounds its JSON patches (json-patch's AccumulatedCopySizeLimit, the request body limit), and at
 * most copyExpansion times the patch's own JSON, as a decoded body may grow at most 4 times.
 * Without a bound each `copy` of the document into itself doubles it: 18 operations in 855 bytes
 * made 237 MB.
 */
export const maxJsonPatchCopyBytes = 3 * 1024 * 1024;
const copyExpansion = 4;

const { applyOperation, getValueByPointer, validator, JsonPatchError } = fastJsonPatch;

/** The bytes a `copy` operation adds to the document; 0 when it names nothing to copy (applyOperation reports that). */
function copySize(doc: unknown, op: Record<string, unknown>): number {
  if (op.op !== 'copy' || typeof op.from !== 'string') return 0;
  try {
    return JSON.stringify(getValueByPointer(doc, op.from))?.length ?? 0;
  } catch {
    return 0;
  }
}

/**
 * What kube-apiserver answers when an operation does not apply (a failed `test`, a missing path, an
 * index past the end): its generic 422, which names no operation, and empty details.
 */
export function jsonPatchFailed(): ApiError {
  return new ApiError(422, 'Invalid', 'the server rejected our request due to an error in our request', {});
}

type Op = Record<string, unknown>;
/**
 * fast-json-patch's validator, but a `copy`'s `from` is looked up in place: its own check runs a
 * `_get` on a deep clone of the whole document (its `validate`), for every copy, so a patch of 500
 * copies of one label cost 500 clones of the object (found by a review: 2 s for a 0.9 MB key).
 * The same errors: only a `from` that does not resolve refuses the copy there.
 */
export const validateInPlace: fastJsonPatch.Validator<unknown> = (op, index, document, existing) => {
  if (document === undefined || op.op !== 'copy') return validator(op, index, document, existing);
  validator(op, index, undefined, existing);
  try {
    applyOperation(document, { op: '_get', path: op.from, value: undefined } as unknown as fastJsonPatch.Operation, true, true, true, index);
  } catch (err) {
    if (!(err instanceof JsonPatchError)) throw err;
    if (err.name === 'OPERATION_PATH_UNRESOLVABLE') throw new JsonPatchError('Cannot perform the operation from a path that does not exist', 'OPERATION_FROM_UNRESOLVABLE', index, op, document);
  }
};
const apply = (document: unknown, op: Op, index: number) => applyOperation(document, op as unknown as fastJsonPatch.Operation, validateInPlace, true, true, index);

/** One operation, its paths' indices read as kube reads them (json-patch-index.ts). */
function applyOne(document: unknown, op: Op, index: number): unknown {
  const from = typeof op.from === 'string' ? plainIndices(document, op.from, false) : op.from;
  if (op.op === 'move' && typeof from === 'string' && typeof op.path === 'string') {
    // As json-patch moves: remove, then add where the path points in what is left.
    const { newDocument, removed } = apply(document, { op: 'remove', path: from }, index);
    return apply(newDocument, { op: 'add', path: plainIndices(newDocument, op.path, true), value: removed }, index).newDocument;
  }
  const path = typeof op.path === 'string' ? plainIndices(document, op.path, op.op === 'add' || op.op === 'copy') : op.path;
  return apply(document, { ...op, path, ...(from === undefined ? {} : { from }) }, index).newDocument;
}

/** Applies a JSON patch to a copy of doc. A malformed patch is 400; one that does not apply is kube's generic 422. */
export function applyJsonPatch(doc: unknown, patch: unknown): unknown {
  if (!Array.isArray(patch) || !patch.every(isJsonMap)) throw badRequest('the JSON patch must be a JSON array of operations');
  if (patch.length > maxJsonPatchOperations) {
    throw tooLarge(`the JSON patch has ${patch.length} operations, more than the limit of ${maxJsonPatchOperations}`);
  }
  try {
    let document = structuredClone(doc);
    let copied = 0;
    const budget = Math.min(maxJsonPatchCopyBytes, copyExpansion * JSON.stringify(patch).length);
    patch.forEach((op, index) => {
      copied += copySize(document, op);
      if (copied > budget) {
        throw tooLarge(`the copy operations of the JSON patch copy more than ${budget} bytes (${copyExpansion} times the patch, at most ${maxJsonPatchCopyBytes}), at operation ${index}`);
      }
      document = applyOne(document, op, index);
    });
    return document;
  } catch (err) {
    if (err instanceof ApiError) throw err;
    throw jsonPatchFailed();
  }
}

/** RFC 7386: null removes a field, objects merge recursively, anything else replaces. */
export function applyMergePatch(doc: unknown, patch: unknown): unknown {
  if (!isJsonMap(patch)) throw badRequest('the merge patch must be a JSON object');
  return merge(doc, patch);
}

function merge(target: unknown, patch: unknown): unknown {
  if (!isJsonMap(patch)) return structuredClone(patch);
  const out: Record<string, unknown> = isJsonMap(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else setField(out, key, merge(out[key], value));
  }
  return out;
}
