/**
 * The one place storage errors become API errors (storage-errors.ts), for the codes the registry
 * tests do not provoke through a store: a unique index lost to a concurrent create, a write that
 * lost to another, a read past the store's revision, a fenced write. And which API errors
 * background work takes for a lost race (404, 409, 422) rather than a failure.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/api/errors.js';
import type { RegistryContext } from '../../src/registry/context.js';
import { lostRace, revealsKeyValue, toApiError } from '../../src/registry/storage-errors.js';
import { StorageError } from '../../src/store/errors.js';
import { newRegistry } from './helpers.js';

describe('storage errors as API errors', () => {
  let ctx: RegistryContext;
  beforeAll(() => {
    ctx = newRegistry().registry.ownedaccesskeys.ctx;
  });
  const asApi = (code: ConstructorParameters<typeof StorageError>[0], message = 'why') => {
    const err = toApiError(new StorageError(code, '/ownedaccesskeys/k', message), ctx, 'k');
    expect(err).toBeInstanceOf(ApiError);
    return err as ApiError;
  };

  it('a unique index lost to a concurrent create: 422 on spec.key, counted as revealing a key value', () => {
    const err = asApi('IndexConflict');
    expect(err.toStatus()).toMatchObject({ code: 422, reason: 'Invalid', details: { name: 'k', causes: [{ field: 'spec.key', message: expect.stringContaining('already in use') }] } });
    expect(revealsKeyValue(err)).toBe(true);
  });

  it("a write that lost to another: 409 with kube's words, not the store's", () => {
    expect(asApi('Conflict', 'row version moved').toStatus()).toMatchObject({
      code: 409,
      reason: 'Conflict',
      message: 'Operation cannot be fulfilled on ownedaccesskeys.management.service "k": the object has been modified; please apply your changes to the latest version and try again',
    });
  });

  it('a read past the current revision: 504 Timeout with ResourceVersionTooLarge, retried after a second', () => {
    expect(asApi('TooLargeResourceVersion', 'resource version 99 is ahead of 7').toStatus()).toMatchObject({
      code: 504,
      reason: 'Timeout',
      message: 'Timeout: resource version 99 is ahead of 7',
      details: { retryAfterSeconds: 1, causes: [{ reason: 'ResourceVersionTooLarge' }] },
    });
  });

  it('a fenced write (another replica holds the lease): 409 carrying the store\'s message', () => {
    expect(asApi('Fenced', 'fencing token 3 is stale').toStatus()).toMatchObject({
      code: 409,
      reason: 'Conflict',
      message: 'Operation cannot be fulfilled on ownedaccesskeys.management.service "k": fencing token 3 is stale',
    });
  });

  it('background work takes 404, 409 and 422 for a lost race, anything else for a failure', () => {
    const err = (code: number) => new ApiError(code, 'Conflict', 'x');
    expect([404, 409, 422].map((c) => lostRace(err(c)))).toEqual([true, true, true]);
    expect([400, 500, 503, 504].map((c) => lostRace(err(c)))).toEqual([false, false, false, false]);
    expect(lostRace(new StorageError('Conflict', 'k', 'x'))).toBe(false);
  });
});
