/**
 * kube-apiserver's ValidatePatchOptions: rules of a patch's options that depend on its type. The
 * server judges them with the other options of the request (query.ts); the registry's apply holds
 * the fieldManager rule too, for callers that reach it without HTTP (the embedded client).
 */
import { invalid, type ApiError } from './errors.js';
import type { FieldError } from './field-errors.js';

export type PatchKind = 'apply' | 'json' | 'merge';

/** What a patch's options say, as far as its type constrains them. */
export interface PatchOptionsSeen {
  fieldManager?: string | undefined;
  /** The request names `force` at all (kube refuses even `force=false` outside apply). */
  forceGiven: boolean;
}

/** The errors kube's ValidatePatchOptions reports, in its order. */
export function patchOptionsErrors(kind: PatchKind, seen: PatchOptionsSeen): FieldError[] {
  if (kind !== 'apply') return seen.forceGiven ? [{ type: 'Forbidden', field: 'force', detail: 'may not be specified for non-apply patch' }] : [];
  return seen.fieldManager ? [] : [{ type: 'Required', field: 'fieldManager', detail: 'is required for apply patch' }];
}

/** A 422 on PatchOptions, as kube answers: `PatchOptions.meta.k8s.io "" is invalid: ...`. */
export function invalidPatchOptions(errs: FieldError[]): ApiError {
  return invalid({ group: 'meta.k8s.io', kind: 'PatchOptions' }, '', errs);
}
