/** Turns a request body into an object of the endpoint's kind, pruning or refusing unknown fields. */
import { badRequest, invalid } from './errors.js';
import { shownName } from './field-errors.js';
import type { ResourceModel } from './model.js';
import { listLengthErrors, pruneUnknownFields } from './schema/walk.js';
import { isJsonMap, type KubeObject } from './types.js';

export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

/** How a write's body is checked: fieldValidation, and the keys its text gave twice (found where it was parsed). */
export interface Decoding {
  fieldValidation?: FieldValidation;
  /** `duplicate field "spec.x"` (JSON) or `line 5: key "x" already set in map` (YAML), as kube words them. */
  duplicateFields?: string[];
  /**
   * The body is a PUT's or a patched object: its lists are judged against the stored ones by
   * validateObject's schema check, which ratchets (ratchet.ts), after its bound on the fields of
   * one object. Refused here, a list stored longer than its bound (a restore, a bound lowered
   * since) refused every update of the object, a leak report's disabling patch among them (found
   * by a review). An apply's configuration is still judged here, before it is merged: it declares
   * its lists, and the merge's cost grows with them.
   */
  update?: boolean;
}

export interface Decoded {
  obj: KubeObject;
  /** `unknown field "spec.x"` for each field dropped, and each duplicate key, under Warn. */
  warnings: string[];
  /** The request sent managedFields as [] (or kube's [{}]): start the record afresh. */
  resetManagedFields: boolean;
}

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  return Array.isArray(v) ? 'array' : typeof v;
}

/**
 * Checks apiVersion and kind (filling them in when absent, as the endpoint implies them), copies
 * the body so the caller's value is never changed, and prunes unknown fields per fieldValidation;
 * duplicate keys count as unknown fields do (Strict: 400, Warn: warnings, Ignore: the last one wins).
 */
/**
 * A field value as an error quotes it: a string as it is, anything else as JSON (cut short). Never
 * String(): a body's object may carry its own "toString" key, which String() would try to call.
 */
function quoted(v: unknown): string {
  const text = typeof v === 'string' ? v : (JSON.stringify(v) ?? jsonType(v));
  return text.length > 100 ? `${text.slice(0, 100)}...` : text;
}

export function decodeObject(model: ResourceModel, body: unknown, decoding: Decoding = {}): Decoded {
  const fieldValidation = decoding.fieldValidation ?? 'Warn';
  const { info } = model;
  if (!isJsonMap(body)) {
    throw badRequest(`the request body must be a ${info.kind} object, not ${jsonType(body)}`);
  }
  const obj = structuredClone(body) as Record<string, unknown>;
  if (obj.apiVersion === undefined || obj.apiVersion === '') obj.apiVersion = info.apiVersion;
  if (obj.kind === undefined || obj.kind === '') obj.kind = info.kind;
  if (obj.apiVersion !== info.apiVersion) {
    throw badRequest(
      `the API version in the data (${quoted(obj.apiVersion)}) does not match the expected API version (${info.apiVersion})`,
    );
  }
  if (obj.kind !== info.kind) {
    throw badRequest(`the kind in the data (${quoted(obj.kind)}) does not match the expected kind (${info.kind})`);
  }
  if (obj.metadata === undefined || obj.metadata === null) obj.metadata = {};
  if (!isJsonMap(obj.metadata)) {
    throw invalid({ group: info.group, kind: info.kind }, '', [
      {
        type: 'TypeInvalid',
        field: 'metadata',
        value: jsonType(obj.metadata),
        detail: `metadata in body must be of type object: "${jsonType(obj.metadata)}"`,
      },
    ]);
  }
  // managedFields are the server's record; a request can only ask for it to be reset.
  const sent = obj.metadata.managedFields;
  const resetManagedFields = Array.isArray(sent) && sent.every((e) => isJsonMap(e) && Object.keys(e).length === 0);
  delete obj.metadata.managedFields;
  dropEmptyMetadata(obj.metadata);
  const unknown = pruneUnknownFields(model.schema, obj).sort();
  const tooLong = decoding.update ? [] : listLengthErrors(model.schema, obj);
  if (tooLong.length > 0) throw invalid({ group: info.group, kind: info.kind }, typeof obj.metadata.name === 'string' ? obj.metadata.name : '', tooLong);
  const problems = [...(decoding.duplicateFields ?? []), ...unknown.map((f) => `unknown field "${shownName(f)}"`)];
  // The message names the first hundred: a client fixing its body needs the first, and the text stays bounded.
  if (problems.length > 0 && fieldValidation === 'Strict') throw badRequest(`strict decoding error: ${problems.slice(0, 100).join(', ')}${problems.length > 100 ? `, and ${problems.length - 100} more` : ''}`);
  const warnings = fieldValidation === 'Warn' ? problems : [];
  return { obj: obj as KubeObject, warnings, resetManagedFields };
}

/**
 * kube-apiserver never stores an empty labels or annotations map or an empty finalizers,
 * ownerReferences or managedFields list (ObjectMeta's omitempty drops them); neither do we, so
 * objects read back exactly as kube would show them.
 */
function dropEmptyMetadata(meta: Record<string, unknown>): void {
  for (const key of ['labels', 'annotations', 'finalizers', 'ownerReferences']) {
    const v = meta[key];
    if (v === null || (Array.isArray(v) && v.length === 0) || (isJsonMap(v) && Object.keys(v).length === 0)) delete meta[key];
  }
}
