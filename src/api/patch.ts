/** JSON patch (RFC 6902, via fast-json-patch) and JSON merge patch (RFC 7386) over plain objects. */
import fastJsonPatch from 'fast-json-patch';
import { badRequest, tooLarge, unprocessable } from './errors.js';
import { isJsonMap } from './types.js';

export const maxJsonPatchOperations = 10_000;

const { applyPatch, JsonPatchError } = fastJsonPatch;

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
    return applyPatch(structuredClone(doc), patch, true, true).newDocument;
  } catch (err) {
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
    else out[key] = merge(out[key], value);
  }
  return out;
}
