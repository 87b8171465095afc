/** Fills a SQLite store in-process, fast (synchronous=NORMAL): benchmarks measure reads, not this. */
import { createRegistry } from '../src/registry/registry.js';
import { SqliteStore } from '../src/store/backends/sqlite.js';

export async function populate(path: string, teams: number, keys: number): Promise<void> {
  const store = new SqliteStore(path, { synchronous: 'NORMAL' });
  const registry = createRegistry(store);
  for (let i = 0; i < teams; i++) {
    await registry.teams.create(
      { metadata: { name: `team-${String(i).padStart(6, '0')}`, labels: { tier: i % 2 ? 'gold' : 'silver' } }, spec: { displayName: `Team ${i}`, users: [`u${i}`, `v${i}`], groups: [`g${i % 50}`], clusterRoles: [{ name: 'teams-viewer' }] } },
      { fieldManager: 'bench' },
    );
  }
  for (let i = 0; i < keys; i++) {
    await registry.ownedaccesskeys.create({ metadata: { name: `key-${String(i).padStart(7, '0')}` }, spec: { user: `u${i % teams || 0}`, ttl: 86400, type: 'User' } }, { fieldManager: 'bench' });
  }
  await store.close();
}
