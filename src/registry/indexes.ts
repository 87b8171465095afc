/**
 * The lookups the watch cache keeps for the registry's readers (kube's cacher indexers), each
 * defined once here: the cache maintains them on every write, and a store without a cache answers
 * the same lookup by filtering a full read of the kind with the same function (byField and dueBy
 * below), so both paths answer alike (test/store/cache-indexes.test.ts holds them to it). A field
 * index gives an object's values, a time index one instant; an object outside an index gives none.
 */
import type { StoredApiObject } from '../api/secrets.js';
import type { KubeObject, OwnedAccessKey, OwnedAccessKeySpec, Team } from '../api/types.js';
import { referenceTokens } from '../auth/grants.js';
import { isLoginKey, loginKeyType } from '../api/key-types.js';
import { mayNotify } from '../api/key-notices.js';
import { subjectOf } from '../auth/identity.js';
import { expiresAt } from '../auth/expiry.js';
import type { CacheIndexers } from '../store/cache-reads.js';
import type { ScanFilter, TextFilter } from '../store/types.js';
import { fieldValues } from '../store/cache/field-index.js';
import { keyOf, present, type RegistryContext } from './context.js';
import { storeCall } from './storage-errors.js';
import { ownerReferencesOf } from '../api/owner-references.js';

const keysPrefix = '/ownedaccesskeys/';
const requestsPrefix = '/accessrequests/';
const credentialsPrefix = '/federatedcredentials/';
const teamsPrefix = '/teams/';
const isKey = (key: string) => key.startsWith(keysPrefix);
const specOf = (obj: unknown) => ((obj as { spec?: unknown }).spec ?? {}) as OwnedAccessKeySpec;
const metaOf = (obj: unknown) => (obj as StoredApiObject).metadata ?? {};
const ms = (s: string | null | undefined) => (s ? Date.parse(s) : NaN);

/** Field indexes: name -> the values of an object. */
export const fieldIndexes = {
  /** Access keys by whom they act for (the user, `team:<name>`, or the subject): the keys-per-holder quota, sign-in's username checks. */
  holder: (key: string, obj: unknown) => (isKey(key) ? holderOf(specOf(obj)) : undefined),
  /** Access keys by spec.team: a team's keys. */
  team: (key: string, obj: unknown) => {
    const team = isKey(key) ? specOf(obj).team : undefined;
    return typeof team === 'string' && team !== '' ? team : undefined;
  },
  /** Objects of every kind by the uids their ownerReferences name: an owner's dependents. */
  owner: (_key: string, obj: unknown) => ownerReferencesOf(metaOf(obj)).map((r) => r.uid),
  /** AccessRequests by spec.user, whom they would give a membership: authentication reads a user's on every request. */
  requester: (key: string, obj: unknown) => {
    const user = key.startsWith(requestsPrefix) ? (obj as { spec?: { user?: unknown } }).spec?.user : undefined;
    return typeof user === 'string' && user !== '' ? user : undefined;
  },
  /**
   * Active AccessRequests by spec.user: what authentication reads on every request. Requests are
   * kept after they end, and anyone who may update a team may ask in another's name: read through
   * `requester`, a user's thousands of Pending, Denied or Expired requests made each of their
   * requests slow (66 ms against 1 ms, found by a review). An Active one past its end is still in
   * it until the expiry sweep records Expired; authentication judges each by its time.
   */
  activeRequester: (key: string, obj: unknown) => {
    if (!key.startsWith(requestsPrefix)) return undefined;
    const o = obj as { spec?: { user?: unknown }; status?: { phase?: unknown } };
    return o.status?.phase === 'Active' && typeof o.spec?.user === 'string' && o.spec.user !== '' ? o.spec.user : undefined;
  },
  /**
   * AccessRequests by spec.team: the requests a team's approvers read. Its own index, not `team`'s:
   * a lookup's size counts every kind under one index, and a team's requests (kept after they end)
   * would make its keys look too many for a narrowed read, and its keys' lookups copy them.
   */
  requestTeam: (key: string, obj: unknown) => {
    const team = key.startsWith(requestsPrefix) ? (obj as { spec?: { team?: unknown } }).spec?.team : undefined;
    return typeof team === 'string' && team !== '' ? team : undefined;
  },
  /**
   * FederatedCredentials by whom the keys they mint act for: spec.user, and `team:<name>` for
   * spec.team. Where a reader without a role finds the rules it may get (keyGrants holds a rule as a
   * key of that user or team). Its own index, not `holder`'s and `team`'s: those count a holder's
   * keys (the quota) and a team's keys.
   */
  credentialFor: (key: string, obj: unknown) => {
    if (!key.startsWith(credentialsPrefix)) return undefined;
    const spec = (obj as { spec?: { user?: unknown; team?: unknown } }).spec ?? {};
    const values: string[] = [];
    if (typeof spec.user === 'string' && spec.user !== '') values.push(spec.user);
    if (typeof spec.team === 'string' && spec.team !== '') values.push(`team:${spec.team}`);
    return values;
  },
  /** FederatedCredentials by spec.issuer: the rules a token exchange weighs (an anonymous endpoint: it must not read every rule). */
  issuer: (key: string, obj: unknown) => {
    const issuer = key.startsWith(credentialsPrefix) ? (obj as { spec?: { issuer?: unknown } }).spec?.issuer : undefined;
    return typeof issuer === 'string' && issuer !== '' ? issuer : undefined;
  },
  /**
   * Teams by the principals their owner and access rules name (`u:<user>`, `t:<team>`, as the team
   * index's references: auth/grants.ts): where a reader without a role on teams finds the teams it may get.
   */
  references: (key: string, obj: unknown) => (key.startsWith(teamsPrefix) ? [...referenceTokens(obj as Team)] : undefined),
  /** Objects being deleted (`terminating`): what the collector and the removal of due objects visit. */
  lifecycle: (_key: string, obj: unknown) => (metaOf(obj).deletionTimestamp ? 'terminating' : undefined),
  /** Access keys that may have something to tell their owner at once (api/key-notices.ts): what the notifier's sweep visits besides the keys due by time. */
  notice: (key: string, obj: unknown) => (isKey(key) && mayNotify(obj) ? mayNotifyValue : undefined),
} as const;

/**
 * Whom a key acts for, as authentication names it (`subjectOf`), when the field it comes from is a
 * string: a key written past the API with a list there (`team: [a, b]` would name `team:a,b`) is in
 * no holder's index, since no text of its JSON names that holder.
 */
function holderOf(spec: OwnedAccessKeySpec): string | undefined {
  const from: unknown = spec.user ? spec.user : spec.team ? spec.team : (spec.subject ?? '');
  return typeof from === 'string' ? subjectOf(spec).name : undefined;
}

/** JSON's escaping of a string, without its quotes: how the string's text appears in stored JSON. */
const escaped = (s: string) => JSON.stringify(s).slice(1, -1);

/**
 * The text of a principal value (`holder`, `credentialFor`): `team:<name>` names a team its object
 * holds as spec.team; any other value is a name it holds as it is (a user, a key's subject), which
 * ends with the same text.
 */
const principalText = (v: string) => escaped(v.startsWith('team:') ? v.slice('team:'.length) : v);

/**
 * For each field index, a text that every object carrying `value` holds in its stored JSON: a name
 * it holds as a string (escaped as JSON escapes it: a suffix of a string's escaping is the escaping
 * of its suffix), or a property name; '' when there is none to say. The fallback's full read of the
 * store (a cache that cannot vouch: filling, or lagging another replica's writes) then reads only
 * the rows holding it (the backend tests it where the rows are), not every row of the kind: the dependents check of a delete, authentication's
 * AccessRequests, the exchange's rules and the collector's lookups read that way while the cache
 * lags. Sound, not exact: the index function still decides each object read
 * (test/registry/index-mentions.test.ts holds every index to it on generated names).
 */
const mentions: Record<keyof typeof fieldIndexes, (value: string) => string> = {
  holder: principalText,
  credentialFor: principalText,
  team: escaped,
  requestTeam: escaped,
  owner: escaped,
  requester: escaped,
  activeRequester: escaped,
  issuer: escaped,
  // `u:<user>` and `t:<team>`, each named as a string by the Team's owner or access rules.
  references: (v) => escaped(v.slice(2)),
  lifecycle: () => '"deletionTimestamp"',
  notice: () => '',
};

/**
 * The rows whose stored JSON may carry `value` in the field index `index` (never passing over one
 * that does), as a text the store's backend tests where the rows are.
 */
export function mightCarry(index: keyof typeof fieldIndexes, value: string): TextFilter {
  return { text: mentions[index](value) };
}

/** The `notice` index's one value. */
export const mayNotifyValue = 'may-notify';

/** Time indexes: name -> an instant of an object (epoch ms). */
export const timeIndexes = {
  /**
   * Access keys by expiry as stored (ttl from creation, or from status.lastActivity). A use known
   * only in memory moves a key's expiry later, never earlier: a key expiring by a time is among
   * the keys this index has at or before it, and the reader decides on the key itself.
   */
  expiry: (key: string, obj: unknown) => (isKey(key) ? expiresAt(obj as OwnedAccessKey) : undefined),
  /** Access keys by their last use as stored (status.lastActivity, else creation): the same lower bound. */
  lastUse: (key: string, obj: unknown) => {
    if (!isKey(key)) return undefined;
    const recorded = ms((obj as OwnedAccessKey).status?.lastActivity);
    if (Number.isFinite(recorded)) return recorded;
    const created = ms(metaOf(obj).creationTimestamp);
    // Without a creation time (none the server wrote lacks one) a key counts as unused since ever:
    // the sweeps read it and judge it on its own health, rather than never.
    return Number.isFinite(created) ? created : 0;
  },
  /**
   * Active AccessRequests by status.expiresAt: the requests whose end the expiry sweep records. An
   * end no date parser reads (a leap second's `23:59:60Z`, which the schema's date-time allows; a
   * restored object) is due at once, as `expired()` judges it ended, rather than never.
   */
  activeUntil: (key: string, obj: unknown) => {
    const status = key.startsWith(requestsPrefix) ? (obj as { status?: { phase?: string; expiresAt?: string } }).status : undefined;
    if (status?.phase !== 'Active' || !status.expiresAt) return undefined;
    const end = ms(status.expiresAt);
    return Number.isFinite(end) ? end : 0;
  },
  /** Login keys by their last identity refresh (0 when never): the identity refresher's due keys. */
  identityRefresh: (key: string, obj: unknown) => (isKey(key) && isLoginKey(obj as OwnedAccessKey) ? ms(specOf(obj).identityRefresh) || 0 : undefined),
} as const;

export type FieldIndexName = keyof typeof fieldIndexes;
export type TimeIndexName = keyof typeof timeIndexes;

/** The indexes as the watch cache takes them. */
export const cacheIndexers: CacheIndexers = { fields: fieldIndexes, times: timeIndexes };

const nameOf = (o: StoredApiObject) => o.metadata.name!;

/**
 * Every object of the kind `keep` accepts, read a page at a time (the path without a cache, or
 * with one that cannot vouch). `consistent`: from the store itself, past a cache, which would serve
 * even while it lags behind the store (a sweep may read it so; a request's lookup may not).
 */
async function* filtered(ctx: RegistryContext, keep: (key: string, o: StoredApiObject) => boolean, consistent = false, mightMatch: ScanFilter = () => true): AsyncGenerator<KubeObject> {
  const cache = consistent ? ctx.store.cache?.() : undefined;
  const objects = cache ? cache.scanStore<StoredApiObject>(ctx.prefix, mightMatch) : ctx.store.scan<StoredApiObject>(ctx.prefix, mightMatch);
  for await (const o of objects) if (keep(keyOf(ctx, nameOf(o)), o)) yield present(o);
}

async function all<T>(items: AsyncIterable<T>): Promise<T[]> {
  const found: T[] = [];
  for await (const item of items) found.push(item);
  return found;
}

/**
 * Whether the object carries `value` in the field index, as the watch cache reads it: an index
 * function that throws on a stored shape the schema would refuse leaves the object out of the
 * index (cache-state.ts), so the fallback's filter passes it over too rather than failing the lookup.
 */
function carries(index: FieldIndexName, key: string, o: StoredApiObject, value: string): boolean {
  try {
    return fieldValues(fieldIndexes[index](key, o)).includes(value);
  } catch {
    return false;
  }
}

/** The objects of the kind whose value in the field index `index` is `value`, in name order. */
export function byField(ctx: RegistryContext, index: FieldIndexName, value: string): Promise<KubeObject[]> {
  return storeCall(ctx, '', async () => {
    const cached = await ctx.store.cache?.().byField<StoredApiObject>(ctx.prefix, index, value);
    if (cached) return cached.map((o) => present(o));
    return all(filtered(ctx, (key, o) => carries(index, key, o, value), true, mightCarry(index, value)));
  });
}

/** byField for a sweep, in name order, each object read as it is reached (the cache as it is, as eachDue). */
export async function* eachByField(ctx: RegistryContext, index: FieldIndexName, value: string): AsyncGenerator<KubeObject> {
  const cached = await storeCall(ctx, '', async () => ctx.store.cache?.().eachByField<StoredApiObject>(ctx.prefix, index, value));
  yield* sweepRead(ctx, cached, (key, o) => carries(index, key, o, value), mightCarry(index, value));
}

/**
 * For each time index, a text every object with an instant in it holds in its stored JSON: the
 * sweeps' fallback read (a cache that cannot vouch) then decodes those rows only, as the scans the
 * indexes replaced did (`mentions('ttl')`, `'Active'`, `'Login'`). '' for none: every key has a
 * last use. Sound, not exact (test/registry/index-mentions.test.ts).
 */
const dueMentions: Record<TimeIndexName, string> = {
  expiry: '"ttl"',
  lastUse: '',
  activeUntil: '"Active"',
  identityRefresh: `"${loginKeyType}"`,
};

/** The rows whose stored JSON may carry an instant in the time index `index`, as a text the backend tests. */
export const mightBeDue = (index: TimeIndexName): TextFilter => ({ text: dueMentions[index] });

/**
 * The objects of the kind whose instant in the time index `index` is at or before `at` (epoch ms),
 * in name order, each read as it is reached: a sweep over many keys holds one at a time.
 */
export async function* eachDue(ctx: RegistryContext, index: TimeIndexName, at: number): AsyncGenerator<KubeObject> {
  const cached = await storeCall(ctx, '', async () => ctx.store.cache?.().dueBy<StoredApiObject>(ctx.prefix, index, at));
  yield* sweepRead(
    ctx,
    cached,
    (key, o) => {
      const t = timeIndexes[index](key, o);
      return t !== undefined && Number.isFinite(t) && t <= at;
    },
    mightBeDue(index),
  );
}

/** What the cache gave a sweep, presented; else every object `keep` accepts, filtered from a scan. */
async function* sweepRead(ctx: RegistryContext, cached: Iterable<StoredApiObject> | undefined, keep: (key: string, o: StoredApiObject) => boolean, mightMatch?: ScanFilter): AsyncGenerator<KubeObject> {
  if (cached) {
    for (const o of cached) yield present(o);
    return;
  }
  const found = filtered(ctx, keep, false, mightMatch);
  for (;;) {
    const next = await storeCall(ctx, '', () => found.next());
    if (next.done) return;
    yield next.value;
  }
}

/** eachDue, all at once (for the sweeps whose due objects are few). */
export function dueBy(ctx: RegistryContext, index: TimeIndexName, at: number): Promise<KubeObject[]> {
  return all(eachDue(ctx, index, at));
}
