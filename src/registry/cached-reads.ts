/**
 * GET and LIST answered as JSON text from the watch cache: each object's API JSON is what the cache
 * holds (it keeps the sealed secrets apart), and a LIST body is spliced from those bytes, with no decoding at all
 * when the caller sees every object and no selector is given. Undefined answers send the caller
 * to the ordinary path (no cache, a cache that cannot vouch, an older revision).
 */
import type { CacheReads, CachedEntry } from '../store/cache-reads.js';
import { decodeEntry, jsonLineOf, jsonOf } from '../store/cache/cache-state.js';
import { sealedField, type StoredApiObject } from '../api/secrets.js';
import type { KubeObject } from '../api/types.js';
import { notFound } from '../api/errors.js';
import { keyOf, present, type RegistryContext } from './context.js';
import { encodeContinue } from './continue-token.js';
import { listHead, maxExaminedPerPage, planList, readList, type ListOptions } from './list.js';
import { storeCall } from './storage-errors.js';
import type { PageBodies } from './page-bodies.js';

/**
 * The API's JSON of a cached version (secrets dropped, resourceVersion set): the entry's own JSON
 * when the cache keeps the sealed secrets apart (as it does by default), else made here.
 */
function presented(store: CacheReads, entry: CachedEntry): Buffer {
  if (store.apart === sealedField) return jsonOf(entry);
  return Buffer.from(JSON.stringify(present(decodeEntry<StoredApiObject>(entry, store.apart))));
}

/** The same followed by a newline, as a GET's body is sent: the cache's own bytes when it keeps them. */
function presentedLine(store: CacheReads, entry: CachedEntry): Buffer {
  if (store.apart === sealedField) return jsonLineOf(entry);
  return Buffer.from(`${JSON.stringify(present(decodeEntry<StoredApiObject>(entry, store.apart)))}\n`);
}

const parse = (json: Buffer) => JSON.parse(json.toString()) as KubeObject;
const comma = Buffer.from(',');
const listEnd = Buffer.from(']}\n');

export interface CachedObject {
  /** The object's JSON as UTF-8 and a newline (the body as sent): shared with the cache, never to be written to. */
  json: Buffer;
  /** A fresh decoded copy, for whoever must look inside (authorization, a Table). */
  object(): KubeObject;
}

/** GET from the cache: the object's JSON, or undefined when the cache cannot answer. */
export async function getJson(ctx: RegistryContext, name: string): Promise<CachedObject | undefined> {
  const store = ctx.store.cache?.();
  if (!store) return undefined;
  const entry = await storeCall(ctx, name, () => store.cachedEntry(keyOf(ctx, name)));
  if (entry === undefined) return undefined;
  if (entry === null) throw notFound(ctx.gr, name);
  const json = presentedLine(store, entry);
  return { json, object: () => parse(json) };
}

/**
 * LIST from the cache as the body's JSON (UTF-8), or undefined when the cache cannot answer it (then
 * list() reads the store). A name-pinned field selector takes the ordinary path: one keyed read.
 * `seesAll` tells that the caller's filter passes every object, so none needs decoding. The body
 * may be one kept in `pages` and handed to others too: never to be written to.
 */
export async function listJson(ctx: RegistryContext, opts: ListOptions, seesAll: boolean, pages?: PageBodies): Promise<Buffer | undefined> {
  const store = ctx.store.cache?.();
  if (!store) return undefined;
  const { filter, ...rest } = opts;
  const plan = await planList(ctx, seesAll ? rest : opts);
  if (plan.selection.exactName !== undefined || plan.selection.readsSealed) return undefined;
  // A restricted reader's filter may say where its objects are: only those keys are read.
  const within = seesAll ? undefined : filter?.within;
  const range = await readList(ctx, plan, () => store.cachedRange(ctx.prefix, { after: plan.after, ...(plan.revision === undefined ? {} : { revision: plan.revision }), ...(within ? { within } : {}) }));
  // Moved on since the range was made (the awaits above): the store answers at the revision asked.
  if (!range?.current()) return undefined;
  const match = plan.selection.match;
  // Without a selector or filter the page is the same bytes for everyone at this revision (page-bodies.ts).
  const keep = !match ? pages : undefined;
  const body = keep?.get(range.fill, range.revision, plan.after, plan.limit);
  if (body) return body;
  // The objects' bytes, a comma before each but the first: one copy into the body, no string made.
  const parts: Buffer[] = [];
  let count = 0;
  let token: string | undefined;
  let remaining: number | undefined;
  let lastKey = '';
  let examined = 0;
  for (const [key, entry] of range.entries) {
    if (plan.limit > 0 && count >= plan.limit) {
      // More objects follow the page (matching or not, as the store path decides): a token to them.
      token = encodeContinue(ctx.cipher, range.revision, lastKey);
      // Without a selector, kube counts what follows: the keys after the page, counted by the
      // cache's sorted keys (two binary searches), none of them visited.
      if (!match) remaining = range.countAfter(lastKey);
      break;
    }
    // A filtered page examines at most as many objects as the store path does (list.ts): past that
    // it ends, short, with a token after the last one examined, so no request walks a whole kind.
    if (match && plan.limit > 0 && examined >= maxExaminedPerPage) {
      token = encodeContinue(ctx.cipher, range.revision, lastKey);
      break;
    }
    examined++;
    const json = presented(store, entry);
    if (match && !match(parse(json))) {
      lastKey = key;
      continue;
    }
    if (count++ > 0) parts.push(comma);
    parts.push(json);
    lastKey = key;
    // A reader who sees only some objects: a token whenever the page is full, whatever follows (list.ts).
    if (match && plan.limit > 0 && count >= plan.limit) {
      token = encodeContinue(ctx.cipher, range.revision, lastKey);
      break;
    }
  }
  const head = JSON.stringify(listHead(ctx, range.revision, token, remaining));
  // The newline a JSON body ends in (response-conventions.ts) is written here: appended later, it
  // would copy the whole page again.
  const spliced = Buffer.concat([Buffer.from(`${head.slice(0, -1)},"items":[`), ...parts, listEnd]);
  keep?.set(range.fill, range.revision, plan.after, plan.limit, spliced);
  return spliced;
}
