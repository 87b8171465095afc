/**
 * The YAML decoding threads (issue 33): a body that runs its thread out of heap, or past the time
 * limit, fails only its own request and the next body gets a fresh thread; one caller may hold
 * only a few bodies, beyond which it is told to retry (429). Real worker threads, real bodies.
 */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/api/errors.js';
import { YamlDecoder } from '../../src/server/yaml-thread.js';

/** 99,000 users: under the node bound, about 100 MB of the parser's heap. */
const heavy = `metadata: {name: heavy}\nspec:\n  users:\n${Array.from({ length: 99_000 }, (_, i) => `  - user${i}`).join('\n')}\n`;

describe('YAML decoding threads', () => {
  it('a body that exhausts its thread\'s heap is refused alone; the body queued behind it is decoded by a fresh thread', async () => {
    const decoder = new YamlDecoder({ threads: 1, heapMb: 48 });
    const [big, small] = await Promise.all([decoder.decode(heavy, 'mallory'), decoder.decode('metadata: {name: fine}\n', 'ana')]);
    expect(big).toEqual({ error: 'the request body needs too much memory to decode', tooLarge: true });
    expect(small).toEqual({ value: { metadata: { name: 'fine' } }, duplicates: [] });
    // And the thread after that one works as well.
    expect(await decoder.decode('a: 1\n', 'mallory')).toEqual({ value: { a: 1 }, duplicates: [] });
  }, 60_000);

  it('a body past the time limit is refused (413) and only it', async () => {
    const decoder = new YamlDecoder({ threads: 1, timeoutMs: 1 });
    // A thread takes longer than 1 ms to start, let alone decode.
    expect(await decoder.decode('a: 1\n', 'ana')).toEqual({ error: 'the request body takes longer than 0.001 seconds to decode', tooLarge: true });
  }, 60_000);

  it('a caller holds at most perCaller bodies; the next is 429 with a retry delay, and other callers still get in', async () => {
    const decoder = new YamlDecoder({ threads: 1, perCaller: 2 });
    const held = [decoder.decode('a: 1\n', 'mallory'), decoder.decode('a: 2\n', 'mallory')];
    let refused: unknown;
    try {
      await decoder.decode('a: 3\n', 'mallory');
    } catch (err) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).toStatus()).toMatchObject({ code: 429, reason: 'TooManyRequests', message: 'this client has 2 request bodies waiting to be decoded already; retry after 1 seconds', details: { retryAfterSeconds: 1 } });
    expect(await decoder.decode('b: 1\n', 'ana')).toEqual({ value: { b: 1 }, duplicates: [] });
    expect(await Promise.all(held)).toEqual([{ value: { a: 1 }, duplicates: [] }, { value: { a: 2 }, duplicates: [] }]);
    // Once answered, the caller may send again.
    expect(await decoder.decode('a: 4\n', 'mallory')).toEqual({ value: { a: 4 }, duplicates: [] });
  }, 60_000);
});
