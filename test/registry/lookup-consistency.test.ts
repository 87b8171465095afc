/**
 * An index lookup on the request path (the token exchange's rules, the keys-per-holder quota,
 * sign-in's username checks) is a consistent read: when the watch cache lags behind the store (a
 * write by another process it has not seen yet) and cannot catch up within its wait, the lookup reads
 * the store itself, not the lagging cache. Before, its fallback scanned the same cache, so a rule
 * written (or deleted) through another replica was not seen until the cache caught up.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRegistry } from '../../src/registry/registry.js';
import { SqliteStore } from '../../src/store/backends/sqlite.js';
import { CachedStore } from '../../src/store/cache/cached-store.js';

const issuer = 'https://token.actions.githubusercontent.com';
const rule = (name: string) => ({ metadata: { name, uid: `uid-${name}`, creationTimestamp: '2026-11-01T00:00:00Z' }, spec: { team: 'platform', issuer, audiences: ['teamkeys'], claims: { repository: 'org/repo' } } });

describe('an index lookup while the watch cache lags', () => {
  it('reads the store, and sees what another process wrote', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'teamkeys-lookup-'));
    const path = join(dir, 'store.db');
    const here = new SqliteStore(path, { pollIntervalMs: 60_000 });
    const cache = new CachedStore(here, { waitMs: 50 });
    const registry = createRegistry(cache);
    const elsewhere = new SqliteStore(path, { pollIntervalMs: 60_000 });
    try {
      expect(await cache.start().ready(5000)).toBe(true);
      await cache.create('/federatedcredentials/first', rule('first'));
      expect((await registry.federatedcredentials.byField('issuer', issuer)).map((o) => o.metadata.name)).toEqual(['first']);
      // The cache hears of other processes' writes only at its next poll (a minute away here).
      (here as unknown as { notifyWatchers: () => void }).notifyWatchers = () => {};
      await elsewhere.create('/federatedcredentials/second', rule('second'));
      expect((await registry.federatedcredentials.byField('issuer', issuer)).map((o) => o.metadata.name)).toEqual(['first', 'second']);
    } finally {
      await cache.close();
      await elsewhere.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
