/**
 * The escalation model's watchers: random small worlds of teams and keys, a watch of each kind
 * opened with every key, random writes; every event every watcher received must have been readable
 * by its key at that event's revision, an object leaving a watcher's view must arrive as the
 * version it could read, and a key that stops authenticating must have its watches ended.
 * ESCALATION_WATCHERS_RUNS sets the count; test/long runs many more.
 */
import { describe, it } from 'vitest';
import { assertWatchersHold } from './watchers/property.js';

const runs = Number(process.env.ESCALATION_WATCHERS_RUNS ?? 8);

describe('no watcher sees more than its key (model-based)', () => {
  it(`holds over ${runs} random worlds and write sequences`, () => assertWatchersHold(runs), 120_000);
});
