/** Query parameters and DeleteOptions bodies into typed registry options; bad values are 400. */
import type { FieldValidation } from '../api/decode.js';
import { badRequest } from '../api/errors.js';
import { isJsonMap } from '../api/types.js';
import { maxGracePeriodSeconds, type DeleteOptions } from '../registry/delete.js';
import type { ListOptions } from '../registry/list.js';
import type { IncludeObject } from './table.js';

export type Query = Record<string, string | string[] | undefined>;

/** The first value of a parameter, as kube-apiserver reads repeated parameters. */
function one(q: Query, name: string): string | undefined {
  const v = q[name];
  return Array.isArray(v) ? v[0] : v;
}

function oneOf<T extends string>(q: Query, name: string, allowed: readonly T[]): T | undefined {
  const v = one(q, name);
  if (v === undefined || v === '') return undefined;
  if (!(allowed as readonly string[]).includes(v)) {
    throw badRequest(`${name}: Unsupported value: "${v}": supported values: ${allowed.map((a) => `"${a}"`).join(', ')}`);
  }
  return v as T;
}

function bool(q: Query, name: string): boolean {
  const v = one(q, name);
  if (v === undefined || v === '' || v === 'false' || v === '0') return false;
  if (v === 'true' || v === '1') return true;
  throw badRequest(`${name}: Invalid value: "${v}": must be true or false`);
}

function integer(q: Query, name: string): number | undefined {
  const v = one(q, name);
  if (v === undefined || v === '') return undefined;
  if (!/^\d{1,15}$/.test(v)) throw badRequest(`${name}: Invalid value: "${v}": must be a non-negative integer`);
  return Number(v);
}

export interface WriteQuery {
  dryRun: boolean;
  fieldValidation: FieldValidation;
  fieldManager?: string;
  force: boolean;
}

export function writeQuery(q: Query): WriteQuery {
  const fieldManager = one(q, 'fieldManager');
  if (fieldManager !== undefined && fieldManager.length > 128) {
    throw badRequest(`fieldManager: Too long: may not be more than 128 characters`);
  }
  const out: WriteQuery = {
    dryRun: oneOf(q, 'dryRun', ['All']) === 'All',
    fieldValidation: oneOf(q, 'fieldValidation', ['Strict', 'Warn', 'Ignore']) ?? 'Warn',
    force: bool(q, 'force'),
  };
  if (fieldManager) out.fieldManager = fieldManager;
  return out;
}

export interface ReadQuery extends ListOptions {
  watch: boolean;
  allowWatchBookmarks: boolean;
  timeoutSeconds?: number;
  includeObject: IncludeObject;
}

export function readQuery(q: Query): ReadQuery {
  const out: ReadQuery = {
    watch: bool(q, 'watch'),
    allowWatchBookmarks: bool(q, 'allowWatchBookmarks'),
    includeObject: oneOf(q, 'includeObject', ['None', 'Metadata', 'Object']) ?? 'Metadata',
  };
  const strings = ['labelSelector', 'fieldSelector', 'continue', 'resourceVersion', 'resourceVersionMatch'] as const;
  for (const name of strings) {
    const v = one(q, name);
    if (v !== undefined) out[name] = v;
  }
  const limit = integer(q, 'limit');
  if (limit !== undefined) out.limit = limit;
  const timeout = integer(q, 'timeoutSeconds');
  if (timeout !== undefined) out.timeoutSeconds = timeout;
  return out;
}

/** A grace period past maxGracePeriodSeconds is out of range: 400, as kube answers a value beyond int64. */
function gracePeriod(seconds: number, what: string): number {
  if (seconds > maxGracePeriodSeconds) throw badRequest(`${what}: must be no more than ${maxGracePeriodSeconds} (about 100 years)`);
  return seconds;
}

/** DeleteOptions from the query and the (optional) body, the body winning as in kube-apiserver. */
export function deleteOptions(q: Query, body: unknown): DeleteOptions {
  const opts: DeleteOptions = {};
  const grace = integer(q, 'gracePeriodSeconds');
  if (grace !== undefined) opts.gracePeriodSeconds = gracePeriod(grace, `gracePeriodSeconds: Invalid value: "${grace}"`);
  const policy = one(q, 'propagationPolicy');
  if (policy) opts.propagationPolicy = policy;
  if (bool(q, 'orphanDependents')) opts.propagationPolicy = 'Orphan';
  opts.dryRun = oneOf(q, 'dryRun', ['All']) === 'All';
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
    if (!Array.isArray(dryRun) || dryRun.some((d) => d !== 'All')) throw badRequest('DeleteOptions.dryRun: supported values: "All"');
    opts.dryRun = opts.dryRun || dryRun.length > 0;
  }
  return opts;
}
