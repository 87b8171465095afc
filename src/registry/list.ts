/** LIST: selectors, paging with continue tokens at one revision, and resourceVersion semantics. */
import { ApiError, badRequest, tooLargeResourceVersion } from '../api/errors.js';
import { parseFieldSelector, parseLabelSelector, type Matcher } from '../api/selectors.js';
import type { StoredApiObject } from '../api/secrets.js';
import type { KubeObject, ObjectList } from '../api/types.js';
import { keyOf, present, type RegistryContext } from './context.js';
import { decodeContinue, encodeContinue, latest } from './continue-token.js';
import { LiveObjects } from './past-revisions.js';
import { storeCall, storeCallUnless, toApiError } from './storage-errors.js';

export interface ListOptions {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: string;
  /**
   * Keeps only objects the caller may see (authorization), on top of the selectors. Its presence
   * marks a restricted reader: past revisions show it only what past-revisions.ts allows.
   */
  filter?: Matcher;
}

/** Parses a resourceVersion query value; undefined for "" and "0" (any recent state will do). */
export function parseResourceVersion(rv: string | undefined): number | undefined {
  if (rv === undefined || rv === '' || rv === '0') return undefined;
  if (!/^\d{1,15}$/.test(rv)) throw badRequest(`invalid resourceVersion "${rv}": must be a non-negative integer`);
  return Number(rv);
}

export interface Selection {
  /** Undefined when the request selects everything. */
  match: Matcher | undefined;
  /** Set when a field selector pins one name: the list is then one keyed read, not a scan. */
  exactName: string | undefined;
  /** Set when a field selector reads sealed fields (keyHash): the cache's API-form bytes cannot answer it. */
  readsSealed?: boolean;
}

/** Both selectors and the visibility filter as one matcher. */
export function parseSelection(opts: { labelSelector?: string; fieldSelector?: string; filter?: Matcher }): Selection {
  const label = parseLabelSelector(opts.labelSelector);
  const field = parseFieldSelector(opts.fieldSelector);
  const filter = opts.filter;
  const matches: Matcher | undefined =
    label || field || filter ? (obj) => (!label || label(obj)) && (!field || field.matcher(obj)) && (!filter || filter(obj)) : undefined;
  // What the filter keeps is within its index values; so is what all three keep.
  const match = matches && filter?.within ? Object.assign(matches, { within: filter.within }) : matches;
  return { match, exactName: field?.exactName, ...(field?.readsSealed ? { readsSealed: true } : {}) };
}

/** The one object a name-pinned selection can match, read at the current revision. */
async function listOne(ctx: RegistryContext, { match, exactName }: Selection): Promise<Page> {
  const obj = await storeCallUnless(ctx, exactName!, 'NotFound', () => ctx.store.get<StoredApiObject>(keyOf(ctx, exactName!)));
  const items = obj && (!match || match(obj)) ? [present(obj)] : [];
  // Read after the object, so the list's revision is never older than what it contains.
  const revision = await storeCall(ctx, '', () => ctx.store.currentRevision());
  return { items, revision };
}

async function readRevision(ctx: RegistryContext, opts: ListOptions): Promise<number | undefined> {
  const requested = parseResourceVersion(opts.resourceVersion);
  const match = opts.resourceVersionMatch ?? '';
  if (!['', 'Exact', 'NotOlderThan'].includes(match)) {
    throw badRequest(`resourceVersionMatch: Unsupported value: "${match}": supported values: "Exact", "NotOlderThan"`);
  }
  if (requested === undefined) {
    if (match === 'Exact') throw badRequest('resourceVersionMatch "Exact" needs a resourceVersion other than "0"');
    return undefined;
  }
  if (match === 'Exact') return requested;
  // NotOlderThan: the current state serves, as long as it is not older than what was asked for.
  await assertReached(ctx, requested);
  return undefined;
}

/** A read "not older than" a revision needs the store to have reached it: 504 otherwise, as kube answers. */
export async function assertReached(ctx: RegistryContext, requested: number | undefined): Promise<void> {
  if (requested === undefined) return;
  const current = await storeCall(ctx, '', () => ctx.store.currentRevision());
  if (requested > current) throw tooLargeResourceVersion(`Too large resource version: ${requested}, current: ${current}`);
}

/**
 * Objects a filtered LIST that pages (a limit) reads from the store in one request at most: past
 * it the page ends with a token, as kube allows a page shorter than its limit. A reader who sees a
 * few keys among a million, reading a past revision (resourceVersionMatch=Exact, or a continue token
 * after a write), read the whole kind in one request (a review measured 20,000 rows for one key).
 */
export const maxExaminedPerPage = 10_000;
/** A filtered LIST without a limit reads the store this many at a time: what it holds at once, not the whole kind. */
const filteredStep = 1000;

/**
 * Store page size: the rest of the limit, or more when a selector will filter some out, but no more
 * than the rest of a filtered page's bound, whatever limit it asks (a review of the bound read the
 * whole kind with limit=1000000).
 */
function pageSize(limit: number, have: number, filtered: boolean, examined: number): number {
  if (limit === 0) return filtered ? filteredStep : 0;
  return filtered ? Math.min(Math.max(limit - have, 256), maxExaminedPerPage - examined) : limit - have;
}

interface Page {
  items: KubeObject[];
  revision: number;
  token?: string;
}

/** Reads store pages from `after` until `limit` objects match or the kind is exhausted. */
async function scan(ctx: RegistryContext, match: Matcher | undefined, limit: number, after: string, at?: number, past?: LiveObjects): Promise<Page> {
  const items: KubeObject[] = [];
  const filtered = match !== undefined || past !== undefined;
  let revision = at;
  let examined = 0;
  for (;;) {
    const page = await ctx.store.list<StoredApiObject>(ctx.prefix, {
      limit: pageSize(limit, items.length, filtered, examined),
      after,
      ...(revision === undefined ? {} : { revision }),
      // Where a restricted reader's objects are (a superset: `match` still decides).
      ...(match?.within ? { within: match.within } : {}),
    });
    revision = page.revision;
    const matching = match ? page.items.map(match) : page.items.map(() => true);
    if (past) {
      const readable = await past.all(page.items.filter((_, i) => matching[i]));
      let n = 0;
      for (let i = 0; i < matching.length; i++) if (matching[i]) matching[i] = readable[n++]!;
    }
    for (let i = 0; i < page.items.length; i++) {
      const obj = page.items[i]!;
      if (!matching[i]) continue;
      items.push(present(obj));
      if (limit > 0 && items.length >= limit) {
        // A reader who sees only some objects gets a token whenever its page is full: whether one
        // follows would tell it that objects it may not see sort after its own (a review spelled a
        // hidden key's name out that way). Its next page may be empty, as kube allows.
        const more = filtered || i < page.items.length - 1 || page.continueAfter !== undefined;
        return more ? { items, revision, token: encodeContinue(ctx.cipher, revision, keyOf(ctx, obj.metadata.name!)) } : { items, revision };
      }
    }
    if (page.continueAfter === undefined) return { items, revision };
    after = page.continueAfter;
    examined += page.items.length;
    if (filtered && limit > 0 && examined >= maxExaminedPerPage) return { items, revision, token: encodeContinue(ctx.cipher, revision, after) };
  }
}

/** What a LIST reads, once its query is checked: the selection, the page size, and where to start. */
export interface ListPlan {
  selection: Selection;
  limit: number;
  /** Undefined: the current state. */
  revision: number | undefined;
  after: string;
  continued: boolean;
}

/** Checks a LIST's query and decides what to read (the resourceVersion semantics live here). */
export async function planList(ctx: RegistryContext, opts: ListOptions = {}): Promise<ListPlan> {
  const selection = parseSelection(opts);
  const limit = opts.limit ?? 0;
  if (!Number.isSafeInteger(limit) || limit < 0) throw badRequest(`limit must be a non-negative integer, not ${limit}`);
  if (opts.continue) {
    if (parseResourceVersion(opts.resourceVersion) !== undefined) {
      throw badRequest('specifying resource version is not allowed when using continue');
    }
    return { selection, limit, ...decodeContinue(ctx.cipher, opts.continue, ctx.prefix), continued: true };
  }
  return { selection, limit, revision: await readRevision(ctx, opts), after: '', continued: false };
}

/** kube's words for a continue token whose revision was compacted away. */
const inconsistentContinue =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, ' +
  'or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an ' +
  'inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

/**
 * Runs a LIST's read, turning storage errors into the API's (a continue token or resourceVersion
 * too old: 410). As kube does, the 410 for a continue token carries a fresh token in the Status's
 * metadata.continue: the rest of the list, read at the current revision.
 */
export async function readList<P>(ctx: RegistryContext, plan: ListPlan, read: () => Promise<P>): Promise<P> {
  try {
    return await read();
  } catch (err) {
    const apiErr = toApiError(err, ctx, '', (message) => (plan.continued ? inconsistentContinue : `The resourceVersion for the provided list is too old: ${message}`));
    if (plan.continued && apiErr instanceof ApiError && apiErr.code === 410) apiErr.continueToken = encodeContinue(ctx.cipher, latest, plan.after);
    throw apiErr;
  }
}

/**
 * The list's metadata: its revision, and the token of the next page when there is one, with the
 * count of objects after the page when it is known (kube's remainingItemCount: lists without selectors).
 */
export function listHead(ctx: RegistryContext, revision: number, token: string | undefined, remaining?: number): Omit<ObjectList<KubeObject>, 'items'> {
  const head: Omit<ObjectList<KubeObject>, 'items'> = { apiVersion: ctx.model.info.apiVersion, kind: ctx.model.info.listKind, metadata: { resourceVersion: String(revision) } };
  if (token) head.metadata.continue = token;
  if (token && remaining !== undefined) head.metadata.remainingItemCount = remaining;
  return head;
}

/** For a restricted reader of a given revision (Exact, or a continue token, crafted or not): what it may see of the past. */
function pastReader(ctx: RegistryContext, revision: number | undefined, filter: Matcher | undefined): LiveObjects | undefined {
  return revision !== undefined && filter ? new LiveObjects(ctx, filter) : undefined;
}

export async function list(ctx: RegistryContext, opts: ListOptions = {}): Promise<ObjectList<KubeObject>> {
  const plan = await planList(ctx, opts);
  const page = await readList(ctx, plan, () =>
    plan.selection.exactName !== undefined && plan.revision === undefined && !plan.continued
      ? listOne(ctx, plan.selection)
      : scan(ctx, plan.selection.match, plan.limit, plan.after, plan.revision, pastReader(ctx, plan.revision, opts.filter)),
  );
  return { ...listHead(ctx, page.revision, page.token), items: page.items };
}
