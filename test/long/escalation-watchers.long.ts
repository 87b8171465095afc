/** The watchers' property (test/auth/escalation-watchers.test.ts) over many more worlds: npm run test:long (about a minute). */
import { describe, it } from 'vitest';
import { assertWatchersHold } from '../auth/watchers/property.js';

const runs = Number(process.env.ESCALATION_WATCHERS_RUNS ?? 50);

describe('no watcher sees more than its key (model-based, long)', () => {
  it(`holds over ${runs} random worlds and write sequences`, () => assertWatchersHold(runs), 900_000);
});
