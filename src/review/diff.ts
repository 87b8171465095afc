/** What was granted and revoked between two reviews: the (identity, verb, object, path) rows of each, compared. */
import type { IdentityEntry, KeyEntry, ReviewDocument, Row } from './model.js';
import { reviewKind, reviewVersion } from './model.js';

/** Every row of a review, in its order. */
export function rowsOf(doc: Pick<ReviewDocument, 'identities'>): Row[] {
  const out: Row[] = [];
  for (const i of doc.identities) for (const g of i.grants) for (const verb of g.verbs) out.push({ identity: i.id, verb, object: g.object, path: g.path });
  return out;
}

const rowKey = (r: Row) => `${r.identity}\u0000${r.verb}\u0000${r.object}\u0000${r.path}`;

export interface KeyChange {
  identity: string;
  key: string;
  /** `added`, `removed`, or the fields that changed (state, rights, scope, groups, expiresAt). */
  change: 'added' | 'removed' | 'changed';
  before?: Pick<KeyEntry, 'state' | 'rights' | 'scope' | 'groups' | 'expiresAt'>;
  after?: Pick<KeyEntry, 'state' | 'rights' | 'scope' | 'groups' | 'expiresAt'>;
}

export interface ReviewDiff {
  previousGeneratedAt: string;
  granted: Row[];
  revoked: Row[];
  keys: KeyChange[];
}

const keyFacts = (k: KeyEntry) => ({ state: k.state, rights: k.rights, scope: k.scope, groups: k.groups, expiresAt: k.expiresAt });

function keysBy(identities: IdentityEntry[]): Map<string, { identity: string; key: KeyEntry }> {
  const out = new Map<string, { identity: string; key: KeyEntry }>();
  // A key's own identity (`key:NAME`) lists it again; its owner's entry is the one that counts.
  for (const i of identities) if (i.kind !== 'key') for (const key of i.keys) out.set(key.name, { identity: i.id, key });
  return out;
}

/**
 * A key's rows, under identity `key:NAME`: its own (rights `own`), its identity's (rights
 * `identity`: the rows of the user, team or subject it acts for), or none.
 */
function keyRows(doc: ReviewDocument, name: string, at: { identity: string; key: KeyEntry } | undefined, byId: Map<string, IdentityEntry>): Row[] {
  if (!at || at.key.rights === 'none') return [];
  const from = at.key.rights === 'own' ? byId.get(`key:${name}`) : byId.get(at.identity);
  return from ? rowsOf({ identities: [from] }).map((r) => ({ ...r, identity: `key:${name}` })) : [];
}

export function diffReviews(previous: ReviewDocument, current: ReviewDocument): ReviewDiff {
  const people = (doc: ReviewDocument) => ({ identities: doc.identities.filter((i) => i.kind !== 'key') });
  const before = new Map(rowsOf(people(previous)).map((r) => [rowKey(r), r]));
  const after = new Map(rowsOf(people(current)).map((r) => [rowKey(r), r]));
  const granted = [...after].filter(([k]) => !before.has(k)).map(([, r]) => r);
  const revoked = [...before].filter(([k]) => !after.has(k)).map(([, r]) => r);
  const keys: KeyChange[] = [];
  const was = keysBy(previous.identities);
  const is = keysBy(current.identities);
  // A key that acts as its identity did and does changes with it (those rows are above); any other
  // key (its scope or groups, added, removed, refused) is compared by the rows it had and has.
  const prevIds = new Map(previous.identities.map((i) => [i.id, i]));
  const curIds = new Map(current.identities.map((i) => [i.id, i]));
  for (const name of [...new Set([...was.keys(), ...is.keys()])].sort()) {
    const old = was.get(name);
    const now = is.get(name);
    if (old?.key.rights === 'identity' && now?.key.rights === 'identity' && old.identity === now.identity) continue;
    const had = new Map(keyRows(previous, name, old, prevIds).map((r) => [rowKey(r), r]));
    const has = new Map(keyRows(current, name, now, curIds).map((r) => [rowKey(r), r]));
    for (const [k, r] of has) if (!had.has(k)) granted.push(r);
    for (const [k, r] of had) if (!has.has(k)) revoked.push(r);
  }
  for (const [name, now] of is) {
    const old = was.get(name);
    if (!old) keys.push({ identity: now.identity, key: name, change: 'added', after: keyFacts(now.key) });
    else if (old.identity !== now.identity || JSON.stringify(keyFacts(old.key)) !== JSON.stringify(keyFacts(now.key))) {
      keys.push({ identity: now.identity, key: name, change: 'changed', before: keyFacts(old.key), after: keyFacts(now.key) });
    }
  }
  for (const [name, old] of was) if (!is.has(name)) keys.push({ identity: old.identity, key: name, change: 'removed', before: keyFacts(old.key) });
  keys.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  return { previousGeneratedAt: previous.generatedAt, granted, revoked, keys };
}

/** A previous review read back: undefined when the value is not one (the caller says which file). */
/** Why a document is not a review: the message and where (the path of keys and indexes to the value). */
export interface ReviewShapeError {
  error: string;
  at: (string | number)[];
}

type Check = (v: unknown) => string | undefined;
/** Fields by name: a check, or a list whose items have a shape. */
interface Shape {
  [field: string]: Check | [Shape];
}
const str: Check = (v) => (typeof v === 'string' ? undefined : 'must be a string');
const strOrNull: Check = (v) => (v === null || typeof v === 'string' ? undefined : 'must be a string or null');
const strings: Check = (v) => (Array.isArray(v) && v.every((s) => typeof s === 'string') ? undefined : 'must be a list of strings');

/** The first value of `v` whose shape is not `shape` (fields by name; a list's items by the item shape). */
function firstMisfit(v: unknown, shape: Shape, at: (string | number)[]): ReviewShapeError | undefined {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return { error: 'must be an object', at };
  for (const [field, check] of Object.entries(shape)) {
    const value = (v as Record<string, unknown>)[field];
    if (Array.isArray(check)) {
      if (!Array.isArray(value)) return { error: `"${field}" must be a list`, at: [...at, field] };
      for (let i = 0; i < value.length; i++) {
        const bad = firstMisfit(value[i], check[0], [...at, field, i]);
        if (bad) return bad;
      }
      continue;
    }
    const why = check(value);
    if (why) return { error: `"${field}" ${why}`, at: [...at, field] };
  }
  return undefined;
}

const keyShape: Shape = { name: str, state: str, rights: str, scope: strOrNull, expiresAt: strOrNull, groups: strings };
const identityShape: Shape = { id: str, grants: [{ object: str, verbs: strings, path: str }], keys: [keyShape] };

/** A previous review (--since), its whole shape checked: a hand-edited or truncated file is refused, never half read. */
export function asReview(value: unknown): ReviewDocument | ReviewShapeError {
  const v = value as Partial<ReviewDocument> | null;
  if (!v || typeof v !== 'object' || v.kind !== reviewKind) return { error: `not an access review (expected "kind": "${reviewKind}", from teamkeys access-review -o json)`, at: [] };
  if (v.version !== reviewVersion) return { error: `an access review of version ${String(v.version)}; this teamkeys reads version ${reviewVersion}`, at: ['version'] };
  const bad = firstMisfit(v, { generatedAt: str, identities: [identityShape] }, []);
  return bad ?? (v as ReviewDocument);
}
