/**
 * The sidecar (`teamkeys serve --sync-source`) is built like `teamkeys watch`, from the same
 * flags, prefixed `sync-`: its source id, prune limit and mirror are the ones given, not fixed ones.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newRepo, type Repo } from '../gitops/git-repo.js';
import { startSidecar, type Sidecar } from '../support/sidecar.js';
import { eventually } from './watch-process.js';

describe('the sidecar takes the daemon flags', () => {
  let sidecar: Sidecar;
  let repo: Repo;

  beforeAll(async () => {
    repo = await newRepo();
    sidecar = await startSidecar(repo.dir, ['--sync-source-id', 'sidecar-src', '--sync-prune', '--sync-max-prune', '0', '--sync-concurrency', '1']);
  });
  afterAll(async () => {
    await sidecar?.stop();
    repo?.cleanup();
  });

  it('annotates with --sync-source-id, keeps its mirror in the state directory, and honours --sync-max-prune', async () => {
    const team = await eventually('the first sync created the teams', async () => {
      const res = await sidecar.get('teams/platform');
      return res.status === 200 ? ((await res.json()) as { metadata: { annotations: Record<string, string> } }) : undefined;
    });
    expect(team.metadata.annotations['gitops.management.service/source']).toBe('sidecar-src');
    expect(readdirSync(join(sidecar.served.dir, 'mirrors'))).toEqual([expect.stringMatching(/\.git$/)]);

    repo.remove('teams/auditors.yaml');
    await repo.commit('no more auditors');
    expect(await sidecar.sync()).toBe(202);
    const refused = await eventually('the prune was refused', () => (sidecar.report().outcome === 'refused' ? sidecar.report() : undefined));
    expect(refused.refused).toMatch(/would delete 1 object\(s\), more than --max-prune 0/);
    expect((await sidecar.get('teams/auditors')).status).toBe(200);
  });
});
