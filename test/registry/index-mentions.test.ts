/**
 * When the watch cache cannot vouch for an index lookup (filling, or lagging behind another
 * replica's writes), the lookup reads the store and decodes only the rows whose stored JSON holds
 * the text `mightCarry` names for the value (registry/indexes.ts). That prefilter must never drop
 * an object carrying the value: checked on generated objects whose names hold quotes, backslashes,
 * control characters, astral and lone surrogates, `team:` or `u:` look-alikes, and now and then a
 * list, a number or an object where a name goes, against the stored encoding and the API JSON both; then end to end, a registry on a store without a cache
 * answers each lookup as a filter of the whole list does.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeObject } from '../../src/store/encode.js';
import { scanTest } from '../../src/store/types.js';
import { fieldValues } from '../../src/store/cache/field-index.js';
import { fieldIndexes, mightBeDue, mightCarry, timeIndexes, type FieldIndexName, type TimeIndexName } from '../../src/registry/indexes.js';
import { createRegistry } from '../../src/registry/registry.js';
import { MemoryStore } from '../../src/store/backends/memory.js';
import type { StoredObject } from '../../src/store/types.js';

const prefixes = ['/ownedaccesskeys/', '/teams/', '/accessrequests/', '/federatedcredentials/'];
const tricky = fc.constantFrom('', 'team:', 'team:ops', 'u:ann', 't:ops', '"', '\\', '\\"', '\n', '\u0000', '\u2028', '😀', '\uD83D', '\uDE00', 'é', 'ops');
/** Names from every kind of character, and look-alikes of the prefixes the index values carry. */
const nameArb = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 6 }),
  fc.array(tricky, { maxLength: 3 }).map((parts) => parts.join('')),
  fc.tuple(fc.constantFrom('team:', 'u:', 't:'), fc.string({ unit: 'binary', maxLength: 4 })).map(([p, s]) => p + s),
);
/**
 * Mostly names; now and then a shape the schema would refuse, as a restore or a hand edit could
 * store: a list of names (templated into a value it would read `a,b`, which no text of the JSON
 * holds), a number, an object. The index functions must give such a field no value at all.
 */
const fieldArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 6, arbitrary: nameArb },
  { weight: 1, arbitrary: fc.array(nameArb, { minLength: 1, maxLength: 2 }) },
  { weight: 1, arbitrary: fc.integer() },
  { weight: 1, arbitrary: fc.constant({}) },
);
const opt = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
const objectArb = fc.record({
  user: opt(fieldArb),
  team: opt(fieldArb),
  subject: opt(fieldArb),
  issuer: opt(fieldArb),
  owners: fc.array(fieldArb, { maxLength: 2 }),
  ownerUser: opt(fieldArb),
  ownerTeam: opt(fieldArb),
  ruleUsers: fc.array(fieldArb, { maxLength: 2 }),
  ruleTeams: fc.array(fieldArb, { maxLength: 2 }),
  terminating: fc.boolean(),
});
type Shape = typeof objectArb extends fc.Arbitrary<infer T> ? T : never;

function objectOf(name: string, b: Shape): StoredObject {
  const spec: Record<string, unknown> = {};
  for (const f of ['user', 'team', 'subject', 'issuer'] as const) if (b[f] !== undefined) spec[f] = b[f];
  if (b.ownerUser !== undefined || b.ownerTeam !== undefined) spec.owner = { ...(b.ownerUser !== undefined ? { user: b.ownerUser } : {}), ...(b.ownerTeam !== undefined ? { team: b.ownerTeam } : {}) };
  if (b.ruleUsers.length || b.ruleTeams.length) spec.access = [{ verbs: ['get'], users: b.ruleUsers, teams: b.ruleTeams }];
  return {
    apiVersion: 'management.service/v1',
    metadata: {
      name,
      uid: `uid-${name}`,
      ...(b.owners.length ? { ownerReferences: b.owners.map((uid) => ({ apiVersion: 'management.service/v1', kind: 'Team', name: 'x', uid })) } : {}),
      ...(b.terminating ? { deletionTimestamp: '2026-11-01T00:00:00Z' } : {}),
    },
    spec,
  } as StoredObject;
}

const indexNames = Object.keys(fieldIndexes) as FieldIndexName[];
const valuesOf = (index: FieldIndexName, key: string, o: StoredObject) => {
  try {
    return fieldValues(fieldIndexes[index](key, o as never));
  } catch {
    return [];
  }
};

describe('the fallback read of an index lookup decodes only the rows that may carry the value', () => {
  it('never passes over an object carrying the value: its stored JSON and its API JSON hold the text named', () => {
    let checked = 0;
    fc.assert(
      fc.property(fc.constantFrom(...prefixes), objectArb, (prefix, shape) => {
        const o = objectOf('n', shape);
        const texts = [encodeObject(o), JSON.stringify(o)];
        for (const index of indexNames) {
          for (const value of valuesOf(index, prefix + 'n', o)) {
            checked++;
            for (const text of texts) expect(scanTest(mightCarry(index, value))(text), `${index}=${JSON.stringify(value)} in ${text}`).toBe(true);
          }
        }
      }),
      { numRuns: 2000 },
    );
    // The generated objects carried index values (a run that checked none would prove nothing).
    expect(checked).toBeGreaterThan(2000);
  });

  it('passes over the objects that hold no such text', () => {
    const json = encodeObject(objectOf('n', { user: 'ann', team: undefined, subject: undefined, issuer: undefined, owners: ['u1'], ownerUser: undefined, ownerTeam: undefined, ruleUsers: [], ruleTeams: [], terminating: false }));
    expect(scanTest(mightCarry('holder', 'bob'))(json)).toBe(false);
    expect(scanTest(mightCarry('holder', 'team:ops'))(json)).toBe(false);
    expect(scanTest(mightCarry('owner', 'u2'))(json)).toBe(false);
    expect(scanTest(mightCarry('lifecycle', 'terminating'))(json)).toBe(false);
    expect(scanTest(mightCarry('references', 'u:bob'))(json)).toBe(false);
    expect(scanTest(mightCarry('owner', 'u1'))(json)).toBe(true);
    // No text to name: every row is read.
    expect(scanTest(mightCarry('notice', 'may-notify'))(json)).toBe(true);
  });

  it('a registry on a store without a cache answers each lookup as a filter of the whole list', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.constantFrom(...prefixes), objectArb), { minLength: 1, maxLength: 12 }), async (objects) => {
        const store = new MemoryStore();
        const registry = createRegistry(store);
        const stored: { key: string; o: StoredObject }[] = [];
        for (const [i, [prefix, shape]] of objects.entries()) {
          const key = `${prefix}o${i}`;
          const o = objectOf(`o${i}`, shape);
          await store.create(key, o);
          stored.push({ key, o });
        }
        const registries = { '/ownedaccesskeys/': registry.ownedaccesskeys, '/teams/': registry.teams, '/accessrequests/': registry.accessrequests, '/federatedcredentials/': registry.federatedcredentials };
        for (const { key, o } of stored) {
          const prefix = key.slice(0, key.lastIndexOf('/') + 1) as keyof typeof registries;
          for (const index of indexNames) {
            for (const value of valuesOf(index, key, o)) {
              const want = stored.filter((s) => s.key.startsWith(prefix) && valuesOf(index, s.key, s.o).includes(value)).map((s) => s.key.slice(prefix.length)).sort();
              const got = (await registries[prefix].byField(index, value)).map((x) => x.metadata.name!).sort();
              expect(got, `${prefix} ${index}=${JSON.stringify(value)}`).toEqual(want);
            }
          }
        }
        await store.close();
      }),
      { numRuns: 60 },
    );
  });
});

describe("the sweeps' fallback read decodes only the rows that may have an instant in the time index", () => {
  const instant = fc.oneof(fc.constant(undefined), fc.constant(''), fc.constant('2026-11-29T10:00:00Z'), fc.constant('2026-12-31T23:59:60Z'), fc.constant('not a time'), fc.integer());
  const shapeArb = fc.record({
    prefix: fc.constantFrom('/ownedaccesskeys/', '/accessrequests/', '/teams/'),
    ttl: fc.oneof(fc.constant(undefined), fc.constant(0), fc.integer({ min: 1, max: 10 ** 7 }), fc.constant('3600')),
    ttlAfterLastActivity: fc.option(fc.boolean(), { nil: undefined }),
    type: fc.option(fc.constantFrom('Login', 'CI', 'login', 'Login ', ''), { nil: undefined }),
    identityRefresh: instant,
    created: instant,
    lastActivity: instant,
    phase: fc.option(fc.constantFrom('Active', 'Pending', 'Expired', 'active'), { nil: undefined }),
    expiresAt: instant,
  });
  const objectOfShape = (s: typeof shapeArb extends fc.Arbitrary<infer T> ? T : never): StoredObject => {
    const spec: Record<string, unknown> = {};
    for (const f of ['ttl', 'ttlAfterLastActivity', 'type', 'identityRefresh'] as const) if (s[f] !== undefined) spec[f] = s[f];
    const status: Record<string, unknown> = {};
    for (const f of ['lastActivity', 'phase', 'expiresAt'] as const) if (s[f] !== undefined) status[f] = s[f];
    return { apiVersion: 'management.service/v1', metadata: { name: 'n', uid: 'uid-n', ...(s.created !== undefined ? { creationTimestamp: s.created } : {}) }, spec, status } as StoredObject;
  };

  it('never passes over an object with an instant: its stored JSON and its API JSON hold the text named', () => {
    let checked = 0;
    fc.assert(
      fc.property(shapeArb, (shape) => {
        const o = objectOfShape(shape);
        const texts = [encodeObject(o), JSON.stringify(o)];
        for (const index of Object.keys(timeIndexes) as TimeIndexName[]) {
          const t = timeIndexes[index](shape.prefix + 'n', o as never);
          if (t === undefined || !Number.isFinite(t)) continue;
          checked++;
          for (const text of texts) expect(scanTest(mightBeDue(index))(text), `${index} in ${text}`).toBe(true);
        }
      }),
      { numRuns: 3000 },
    );
    expect(checked).toBeGreaterThan(1000);
  });

  it('passes over the rows that hold no such text', () => {
    const plainKey = encodeObject({ apiVersion: 'management.service/v1', metadata: { name: 'k' }, spec: { user: 'ann' } } as StoredObject);
    expect(scanTest(mightBeDue('expiry'))(plainKey)).toBe(false);
    expect(scanTest(mightBeDue('identityRefresh'))(plainKey)).toBe(false);
    expect(scanTest(mightBeDue('activeUntil'))(encodeObject({ apiVersion: 'management.service/v1', metadata: { name: 'r' }, status: { phase: 'Expired' } } as StoredObject))).toBe(false);
    // Every key has a last use: every row is read.
    expect(scanTest(mightBeDue('lastUse'))(plainKey)).toBe(true);
  });
});
