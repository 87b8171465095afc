import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/api/errors.js';
import { accessKey, newRegistry, team } from './helpers.js';

/** Either a result or an ApiError with a sane Status; anything else is a bug. */
async function outcome(p: Promise<unknown>): Promise<'ok' | number> {
  try {
    await p;
    return 'ok';
  } catch (err) {
    if (!(err instanceof ApiError)) throw new Error(`untyped error: ${String((err as Error)?.stack ?? err)}`);
    const s = err.toStatus();
    expect(s.kind).toBe('Status');
    expect(s.code).toBeGreaterThanOrEqual(400);
    // The one 5xx a client can cause is kube's 504 for a resourceVersion from the future.
    if (s.code >= 500) expect([s.code, s.reason]).toEqual([504, 'Timeout']);
    expect(typeof s.message).toBe('string');
    return s.code;
  }
}

const anyJson = fc.jsonValue({ maxDepth: 6 });
const fieldNames = fc.constantFrom(
  'apiVersion', 'kind', 'metadata', 'spec', 'status', 'name', 'generateName', 'labels', 'annotations', 'finalizers',
  'ownerReferences', 'resourceVersion', 'uid', 'users', 'groups', 'clusterRoles', 'access', 'owner', 'key', 'ttl',
  'scope', 'roles', 'identity', 'connectorData', 'user', 'team', 'subject', 'verbs', 'deletionTimestamp',
);
/** Objects shaped like manifests, with plausible keys holding random values. */
const manifestLike = fc.dictionary(fieldNames, fc.oneof(anyJson, fc.dictionary(fieldNames, anyJson, { maxKeys: 6 })), { maxKeys: 8 });
/** A valid object with one field replaced by something random. */
const mutated = fc.tuple(fc.constantFrom(...['metadata', 'spec', 'kind', 'apiVersion']), fieldNames, anyJson).map(([top, field, value]) => {
  const base = accessKey('k', { user: 'ana', groups: ['g'] }, { labels: { a: 'b' } }) as Record<string, unknown>;
  const inner = base[top];
  base[top] = typeof inner === 'object' && inner !== null ? { ...inner, [field]: value } : value;
  return base;
});
const patchOps = fc.array(
  fc.record({ op: fc.constantFrom('add', 'remove', 'replace', 'test', 'move', 'copy', 'bogus'), path: fc.string(), value: anyJson, from: fc.string() }, { requiredKeys: ['op'] }),
  { maxLength: 5 },
);

describe('hostile input: every bad body is a Status, never a crash', () => {
  it('create with random and mutated bodies', async () => {
    const { registry } = newRegistry();
    await fc.assert(
      fc.asyncProperty(fc.oneof(anyJson, manifestLike, mutated), fc.constantFrom('teams', 'ownedaccesskeys'), async (body, plural) => {
        await outcome(registry.byPlural(plural)!.create(body));
      }),
      { numRuns: 400 },
    );
  });

  it('update and patches with random bodies against an existing object', async () => {
    const { registry } = newRegistry();
    await registry.teams.create(team('t', { users: ['a'] }));
    await fc.assert(
      fc.asyncProperty(fc.oneof(anyJson, manifestLike), patchOps, anyJson, async (body, ops, merge) => {
        const current = await registry.teams.get('t');
        await outcome(registry.teams.update('t', body));
        await outcome(registry.teams.update('t', { ...(typeof body === 'object' && body && !Array.isArray(body) ? body : {}), metadata: current.metadata }));
        await outcome(registry.teams.patch('t', 'json', ops));
        await outcome(registry.teams.patch('t', 'merge', merge));
        // The object is still readable and valid after whatever was accepted.
        expect((await registry.teams.get('t')).metadata.name).toBe('t');
      }),
      { numRuns: 300 },
    );
  });

  it('random selectors, continue tokens and resource versions', async () => {
    const { registry } = newRegistry();
    await registry.teams.create(team('t', {}, { labels: { env: 'prod' } }));
    await fc.assert(
      fc.asyncProperty(fc.string(), fc.string(), fc.string(), fc.string(), async (label, field, token, rv) => {
        await outcome(registry.teams.list({ labelSelector: label }));
        await outcome(registry.teams.list({ fieldSelector: field }));
        await outcome(registry.teams.list({ continue: token }));
        await outcome(registry.teams.list({ resourceVersion: rv }));
      }),
      { numRuns: 300 },
    );
  });
});
describe('hostile input: found by the generators above', () => {
  it('an apiVersion or kind that is an object with its own "toString" is a 400 quoting it, not a crash (seed 1505128574)', async () => {
    const { registry } = newRegistry();
    for (const field of ['apiVersion', 'kind'] as const) {
      const body = { ...(accessKey('k', { user: 'ana' }) as Record<string, unknown>), [field]: { toString: '' } };
      const err = await registry.ownedaccesskeys.create(body, { fieldManager: 't' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      const status = (err as ApiError).toStatus();
      expect([status.code, status.reason]).toEqual([400, 'BadRequest']);
      expect(status.message).toContain('{"toString":""}');
    }
  });
});

describe('hostile input: metadata.annotations that is not a map', () => {
  it('is a 422 on metadata.annotations for a create and an update of a key, not a crash (seed 1950801112)', async () => {
    const { registry } = newRegistry();
    const bad = (value: unknown) => {
      const body = accessKey('k', { user: 'ana' }) as { metadata: Record<string, unknown> };
      body.metadata.annotations = value;
      return body;
    };
    for (const value of [true, 'x', 5, ['a']]) {
      const err = await registry.ownedaccesskeys.create(bad(value), { fieldManager: 't' }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      expect((err as ApiError).toStatus().code).toBe(422);
    }
    await registry.ownedaccesskeys.create(accessKey('k', { user: 'ana' }), { fieldManager: 't' });
    const err = await registry.ownedaccesskeys.update('k', bad('x'), { fieldManager: 't' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).toStatus().code).toBe(422);
  });
});
