/**
 * The sidecar (`teamkeys serve --sync-source`) is built like `teamkeys watch`, from the same
 * flags, prefixed `sync-`: its source id, prune limit and mirror are the ones given, not fixed ones.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Report } from '../../src/gitops/report/report.js';
import { newRepo, type Repo } from '../gitops/git-repo.js';
import { startServe, type Served } from '../server/serve-process.js';
import { eventually } from './watch-process.js';

describe('the sidecar takes the daemon flags', () => {
  let served: Served;
  let repo: Repo;
  const api = () => `${served.url}/apis/management.service/v1`;
  const auth = () => ({ Authorization: `Bearer ${served.adminKey}` });
  const report = () => JSON.parse(readFileSync(join(served.dir, 'sync', 'report.json'), 'utf8')) as Report;

  beforeAll(async () => {
    repo = await newRepo();
    served = await startServe([
      '--insecure-http', '--sync-source', repo.dir, '--sync-ref', 'main', '--sync-source-id', 'sidecar-src',
      '--sync-prune', '--sync-max-prune', '0', '--sync-concurrency', '1', '--sync-interval', '1h',
    ]);
  });
  afterAll(async () => {
    await served.stop();
    repo.cleanup();
  });

  it('annotates with --sync-source-id, keeps its mirror in the state directory, and honours --sync-max-prune', async () => {
    const team = await eventually('the first sync created the teams', async () => {
      const res = await fetch(`${api()}/teams/platform`, { headers: auth() });
      return res.status === 200 ? ((await res.json()) as { metadata: { annotations: Record<string, string> } }) : undefined;
    });
    expect(team.metadata.annotations['gitops.management.service/source']).toBe('sidecar-src');
    expect(readdirSync(join(served.dir, 'mirrors'))).toEqual([expect.stringMatching(/\.git$/)]);

    repo.remove('teams/auditors.yaml');
    await repo.commit('no more auditors');
    expect((await fetch(`${new URL(served.url).origin}/sync`, { method: 'POST', headers: auth() })).status).toBe(202);
    const refused = await eventually('the prune was refused', () => (report().outcome === 'refused' ? report() : undefined));
    expect(refused.refused).toMatch(/would delete 1 object\(s\), more than --max-prune 0/);
    expect((await fetch(`${api()}/teams/auditors`, { headers: auth() })).status).toBe(200);
  });
});
