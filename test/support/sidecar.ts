/**
 * The sidecar (`teamkeys serve --sync-source`) as the daemon tests drive it: a served process over
 * plain HTTP syncing a test's git repository, with no timer (`--sync-interval 1h`) so that a test
 * asks for each sync after its first with `sync()` and reads the report the sync wrote.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Report } from '../../src/gitops/report/report.js';
import { startServe, type Served } from './serve-process.js';

export interface Sidecar {
  served: Served;
  /** GET (or `init`) on a management.service/v1 path, `teams/platform`, as the administrator. */
  get(path: string, init?: RequestInit): Promise<Response>;
  /** POST /sync as the administrator: the status (202 when a sync was started). */
  sync(): Promise<number>;
  /** The last sync's report.json in the state directory. */
  report(): Report;
  stop(): Promise<number | null>;
}

/** Starts the sidecar on `sourceDir`'s main branch; `flags` go after the source (--sync-source-id, --sync-prune, ...). */
export async function startSidecar(sourceDir: string, flags: string[] = []): Promise<Sidecar> {
  const served = await startServe(['--insecure-http', '--sync-source', sourceDir, '--sync-ref', 'main', '--sync-interval', '1h', ...flags]);
  const auth = { Authorization: `Bearer ${served.adminKey}` };
  return {
    served,
    get: (path, init = {}) => fetch(`${served.url}/apis/management.service/v1/${path}`, { ...init, headers: { ...auth, ...init.headers } }),
    sync: async () => (await fetch(`${new URL(served.url).origin}/sync`, { method: 'POST', headers: auth })).status,
    report: () => JSON.parse(readFileSync(join(served.dir, 'sync', 'report.json'), 'utf8')) as Report,
    stop: () => served.stop(),
  };
}
