/**
 * Query parameters and DeleteOptions bodies into typed registry options. Malformed values are 400;
 * well-formed values an option does not allow are 422 on the options kind, as kube-apiserver's
 * ValidateCreateOptions, ValidateListOptions and the like answer.
 */
import type { FieldValidation } from '../api/decode.js';
import { badRequest, invalid } from '../api/errors.js';
import type { FieldError } from '../api/field-errors.js';
import { patchOptionsErrors, type PatchKind } from '../api/patch-options.js';
import { isJsonMap } from '../api/types.js';
import { isServerFieldManager } from '../api/key-notices.js';
import type { DeleteOptions } from '../registry/delete.js';
import type { ListOptions } from '../registry/list.js';
import type { IncludeObject } from './table.js';

export type Query = Record<string, string | string[] | undefined>;

/** The first value of a parameter, as kube-apiserver reads repeated parameters. */
function one(q: Query, name: string): string | undefined {
  const v = q[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Every value of a parameter, as kube-apiserver reads list-valued ones (dryRun). */
function all(q: Query, name: string): string[] {
  const v = q[name];
  return v === undefined ? [] : Array.isArray(v) ? v : [v];
}

/** The options kinds kube-apiserver names in its 422s: `CreateOptions.meta.k8s.io "" is invalid`. */
export type OptionsKind = 'CreateOptions' | 'UpdateOptions' | 'PatchOptions' | 'DeleteOptions' | 'ListOptions';

function refuse(kind: OptionsKind, errs: FieldError[]): void {
  if (errs.length > 0) throw invalid({ group: 'meta.k8s.io', kind }, '', errs);
}

/** kube's ValidateDryRun: every value must be "All"; the value is shown as Go prints a []string. */
function dryRunErrors(values: string[]): FieldError[] {
  if (values.every((v) => v === 'All')) return [];
  const rendered = `[]string{${values.map((v) => JSON.stringify(v)).join(', ')}}`;
  return [{ type: 'NotSupported', field: 'dryRun', rendered, detail: 'supported values: "All"' }];
}

/** kube reads a boolean parameter as true unless it is "0" or "false" (any case); present and empty is true. */
function bool(q: Query, name: string): boolean {
  const v = one(q, name);
  if (v === undefined) return false;
  return v !== '0' && v.toLowerCase() !== 'false';
}

/** An int64 parameter, as kube parses it: a sign is allowed; what each option does with a negative is its own rule. */
function integer(q: Query, name: string): number | undefined {
  const v = one(q, name);
  if (v === undefined || v === '') return undefined;
  if (!/^[-+]?\d{1,15}$/.test(v)) throw badRequest(`${name}: Invalid value: "${v}": must be an integer`);
  return Number(v);
}

export interface WriteQuery {
  dryRun: boolean;
  fieldValidation: FieldValidation;
  fieldManager?: string;
  force: boolean;
}

const fieldValidations = ['Ignore', 'Strict', 'Warn'] as const;

/**
 * The options of a create (POST), update (PUT) or patch (PATCH); values they do not allow are 422 on
 * `kind`. A patch's options are judged by its type too (an apply needs a fieldManager; no other
 * patch takes `force`), first, as kube's ValidatePatchOptions reports them.
 */
export function writeQuery(q: Query, kind: OptionsKind, patch?: PatchKind): WriteQuery {
  const fieldManager = one(q, 'fieldManager');
  const errs = patch ? patchOptionsErrors(patch, { fieldManager, forceGiven: one(q, 'force') !== undefined }) : [];
  errs.push(...dryRunErrors(all(q, 'dryRun')));
  if (fieldManager !== undefined && Buffer.byteLength(fieldManager) > 128) {
    errs.push({ type: 'TooLong', field: 'fieldManager', detail: 'may not be more than 128 bytes' });
  }
  if (fieldManager !== undefined && isServerFieldManager(fieldManager)) {
    errs.push({ type: 'Invalid', field: 'fieldManager', value: fieldManager, detail: 'it names one of the server\'s own writers' });
  }
  const validation = one(q, 'fieldValidation') ?? '';
  if (validation !== '' && !(fieldValidations as readonly string[]).includes(validation)) {
    errs.push({ type: 'NotSupported', field: 'fieldValidation', value: validation, detail: `supported values: "", ${fieldValidations.map((a) => `"${a}"`).join(', ')}` });
  }
  refuse(kind, errs);
  const out: WriteQuery = {
    dryRun: all(q, 'dryRun').length > 0,
    fieldValidation: (validation || 'Warn') as FieldValidation,
    force: bool(q, 'force'),
  };
  if (fieldManager) out.fieldManager = fieldManager;
  return out;
}

export interface ReadQuery extends ListOptions {
  watch: boolean;
  allowWatchBookmarks: boolean;
  /** client-go's watch-list; undefined when the parameter is absent (kube tells absent from false). */
  sendInitialEvents?: boolean;
  timeoutSeconds?: number;
  includeObject: IncludeObject;
}

const includeObjects = ['None', 'Metadata', 'Object'] as const;

export function readQuery(q: Query): ReadQuery {
  const include = one(q, 'includeObject') || 'Metadata';
  if (!(includeObjects as readonly string[]).includes(include)) {
    throw badRequest(`includeObject: Unsupported value: "${include}": supported values: ${includeObjects.map((a) => `"${a}"`).join(', ')}`);
  }
  const out: ReadQuery = {
    watch: bool(q, 'watch'),
    allowWatchBookmarks: bool(q, 'allowWatchBookmarks'),
    includeObject: include as IncludeObject,
  };
  if (q.sendInitialEvents !== undefined) out.sendInitialEvents = bool(q, 'sendInitialEvents');
  const strings = ['labelSelector', 'fieldSelector', 'continue', 'resourceVersion', 'resourceVersionMatch'] as const;
  for (const name of strings) {
    const v = one(q, name);
    if (v !== undefined) out[name] = v;
  }
  // kube pages only with a positive limit: 0 and negative values mean no limit.
  const limit = integer(q, 'limit');
  if (limit !== undefined && limit > 0) out.limit = limit;
  const timeout = integer(q, 'timeoutSeconds');
  if (timeout !== undefined && timeout > 0) out.timeoutSeconds = timeout;
  refuse('ListOptions', out.watch ? watchOptionErrors(out) : listOptionErrors(out));
  return out;
}

/**
 * A grace period is any integer (deletion is immediate whatever it says, as for kube's custom
 * resources); past what a double holds exactly (about 9e15, short of int64) it is a 400, as kube
 * answers a value it cannot decode into an int64.
 */
function gracePeriod(seconds: number, what: string): number {
  if (!Number.isSafeInteger(seconds)) throw badRequest(`${what}: must be an integer between -9007199254740991 and 9007199254740991`);
  return seconds;
}

const forbidden = (field: string, detail: string): FieldError => ({ type: 'Forbidden', field, detail });

/** kube's ValidateListOptions for a list (or deletecollection). */
function listOptionErrors(o: ReadQuery): FieldError[] {
  const errs: FieldError[] = [];
  const match = o.resourceVersionMatch ?? '';
  if (match) {
    if (!o.resourceVersion) errs.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden unless resourceVersion is provided'));
    if (o.continue) errs.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
    if (match !== 'Exact' && match !== 'NotOlderThan') {
      errs.push({ type: 'NotSupported', field: 'resourceVersionMatch', value: match, detail: 'supported values: "Exact", "NotOlderThan", ""' });
    }
    if (match === 'Exact' && o.resourceVersion === '0') errs.push(forbidden('resourceVersionMatch', 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'));
  }
  if (o.sendInitialEvents !== undefined) errs.push(forbidden('sendInitialEvents', 'sendInitialEvents is forbidden for list'));
  return errs;
}

/** kube's ValidateListOptions for a watch (the WatchList feature on, as it is by default since 1.32). */
function watchOptionErrors(o: ReadQuery): FieldError[] {
  const errs: FieldError[] = [];
  const match = o.resourceVersionMatch ?? '';
  if (o.sendInitialEvents !== undefined && match !== 'NotOlderThan') {
    errs.push(forbidden('resourceVersionMatch', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'));
  }
  if (match) {
    if (o.sendInitialEvents === undefined) errs.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'));
    if (match !== 'NotOlderThan') errs.push({ type: 'NotSupported', field: 'resourceVersionMatch', value: match, detail: 'supported values: "NotOlderThan"' });
    if (o.continue) errs.push(forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden when continue is provided'));
  }
  return errs;
}

/** DeleteOptions from the query and the (optional) body, the body winning as in kube-apiserver. */
export function deleteOptions(q: Query, body: unknown): DeleteOptions {
  const opts: DeleteOptions = {};
  const grace = integer(q, 'gracePeriodSeconds');
  if (grace !== undefined) opts.gracePeriodSeconds = gracePeriod(grace, `gracePeriodSeconds: Invalid value: "${grace}"`);
  const policy = one(q, 'propagationPolicy');
  if (policy) opts.propagationPolicy = policy;
  if (bool(q, 'orphanDependents')) opts.propagationPolicy = 'Orphan';
  refuse('DeleteOptions', dryRunErrors(all(q, 'dryRun')));
  opts.dryRun = all(q, 'dryRun').length > 0;
  if (body === undefined) return opts;
  if (!isJsonMap(body)) throw badRequest('the DeleteOptions body must be an object');
  const { gracePeriodSeconds, propagationPolicy, preconditions, dryRun, orphanDependents } = body;
  if (gracePeriodSeconds !== undefined && gracePeriodSeconds !== null) {
    // As kube's decoding into an int64: 1.5 or 1e300 is a 400, not a deadline nobody can write down.
    if (typeof gracePeriodSeconds !== 'number' || !Number.isInteger(gracePeriodSeconds)) throw badRequest('DeleteOptions.gracePeriodSeconds must be an integer');
    opts.gracePeriodSeconds = gracePeriod(gracePeriodSeconds, `DeleteOptions.gracePeriodSeconds: Invalid value: ${gracePeriodSeconds}`);
  }
  if (propagationPolicy !== undefined && propagationPolicy !== null) {
    if (typeof propagationPolicy !== 'string') throw badRequest('DeleteOptions.propagationPolicy must be a string');
    opts.propagationPolicy = propagationPolicy;
  }
  if (orphanDependents === true) opts.propagationPolicy = 'Orphan';
  if (preconditions !== undefined && preconditions !== null) {
    if (!isJsonMap(preconditions)) throw badRequest('DeleteOptions.preconditions must be an object');
    const { uid, resourceVersion } = preconditions;
    if ((uid !== undefined && typeof uid !== 'string') || (resourceVersion !== undefined && typeof resourceVersion !== 'string')) {
      throw badRequest('DeleteOptions.preconditions.uid and resourceVersion must be strings');
    }
    opts.preconditions = { ...(uid ? { uid } : {}), ...(resourceVersion ? { resourceVersion } : {}) };
  }
  if (dryRun !== undefined && dryRun !== null) {
    if (!Array.isArray(dryRun) || dryRun.some((d) => typeof d !== 'string')) throw badRequest('DeleteOptions.dryRun must be a list of strings');
    refuse('DeleteOptions', dryRunErrors(dryRun as string[]));
    opts.dryRun = opts.dryRun || dryRun.length > 0;
  }
  return opts;
}
