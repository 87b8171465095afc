import { afterAll, beforeAll } from 'vitest';
import { PostgresStore } from '../../src/store/backends/postgres.js';
import { describeStoreConformance } from './conformance.js';
import { startPostgres, type PostgresServer } from './postgres-server.js';

let server: PostgresServer;
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(() => server?.stop());

describeStoreConformance(
  'postgres',
  async () => {
    const url = await server.database();
    const store = new PostgresStore(url, { pollIntervalMs: 50 });
    return { store, reopen: () => new PostgresStore(url, { pollIntervalMs: 50 }), cleanup: () => store.close() };
  },
  { sharedHandles: true },
);
