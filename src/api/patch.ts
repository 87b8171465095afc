/** JSON patch (RFC 6902, via fast-json-patch) and JSON merge patch (RFC 7386) over plain objects. */
import fastJsonPatch from 'fast-json-patch';
import { ApiError, badRequest, tooLarge, unprocessable } from './errors.js';
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

const { applyOperation, getValueByPointer, JsonPatchError } = fastJsonPatch;

/** The bytes a `copy` operation adds to the document; 0 when it names nothing to copy (applyOperation reports that). */
function copySize(doc: unknown, op: unknown): number {
  if (!isJsonMap(op) || op.op !== 'copy' || typeof op.from !== 'string') return 0;
  try {
    return JSON.stringify(getValueByPointer(doc, op.from))?.length ?? 0;
  } catch {
    return 0;
  }
}

const reasons: Record<string, string> = {
  TEST_OPERATION_FAILED: 'test failed',
  OPERATION_PATH_UNRESOLVABLE: 'the path does not exist',
  OPERATION_FROM_UNRESOLVABLE: 'the from path does not exist',
  OPERATION_PATH_CANNOT_ADD: 'cannot add at this path',
  OPERATION_PATH_ILLEGAL_ARRAY_INDEX: 'illegal array index',
  OPERATION_VALUE_OUT_OF_BOUNDS: 'array index out of bounds',
  OPERATION_OP_INVALID: 'unknown op',
  OPERATION_PATH_INVALID: 'path must be a string starting with /',
  OPERATION_VALUE_REQUIRED: 'value is required',
  OPERATION_FROM_REQUIRED: 'from is required',
  OPERATION_NOT_AN_OBJECT: 'operation must be an object',
  OPERATION_VALUE_CANNOT_CONTAIN_UNDEFINED: 'value must not contain undefined',
};

/** Applies a JSON patch to a copy of doc. A malformed patch is 400; one that does not apply is 422. */
export function applyJsonPatch(doc: unknown, patch: unknown): unknown {
  if (!Array.isArray(patch)) throw badRequest('the JSON patch must be a JSON array of operations');
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
      document = applyOperation(document, op as fastJsonPatch.Operation, true, true, true, index).newDocument;
    });
    return document;
  } catch (err) {
    if (err instanceof ApiError) throw err;
    if (err instanceof JsonPatchError) {
      const op = isJsonMap(err.operation) ? err.operation : {};
      const what = `${String(op.op ?? '?')} ${String(op.path ?? '?')}`;
      const reason = reasons[err.name] ?? err.name;
      throw unprocessable(`json patch operation ${err.index ?? 0} (${what}) failed: ${reason}`);
    }
    throw unprocessable(`json patch failed: ${err instanceof Error ? err.message : String(err)}`);
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
