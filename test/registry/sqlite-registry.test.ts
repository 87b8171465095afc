import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/backends/sqlite.js';
import { newRegistry, spec, statusOf, take, team } from './helpers.js';

describe('the registry on the SQLite store', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it('keeps objects, revisions and uids across a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'teamkeys-reg-'));
    dirs.push(dir);
    const path = join(dir, 'db');
    const first = newRegistry({ store: new SqliteStore(path) });
    const { object: t } = await first.registry.teams.create(team('platform', { users: ['ana'] }, { finalizers: ['example.com/keep'] }));
    const { object: k } = await first.registry.ownedaccesskeys.create({ metadata: { name: 'ci' }, spec: { team: 'platform' } });
    await first.registry.teams.delete('platform');
    await first.store.close();

    const second = newRegistry({ store: new SqliteStore(path) });
    try {
      const again = await second.registry.teams.get('platform');
      expect(again.metadata.uid).toBe(t.metadata.uid);
      expect(again.metadata.deletionTimestamp).toBeDefined();
      expect(spec(await second.registry.ownedaccesskeys.get('ci')).key).toBeUndefined();
      expect((await second.registry.ownedaccesskeys.get('ci')).metadata.resourceVersion).toBe(k.metadata.resourceVersion);
      const w = second.registry.teams.watch({ resourceVersion: again.metadata.resourceVersion! });
      await second.registry.teams.patch('platform', 'merge', { metadata: { finalizers: null } });
      expect((await take(w, 1)).map((e) => e.type)).toEqual(['DELETED']);
      expect((await statusOf(second.registry.teams.get('platform'))).code).toBe(404);
    } finally {
      await second.store.close();
    }
  });
});
