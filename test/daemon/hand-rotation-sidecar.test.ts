/**
 * Issue 40, point 1, over real processes: the sidecar in its default report-only mode, a key
 * rotated by hand with `teamkeys rotate`, then a commit adding fields to that key. The rotation
 * wrote the value and status.rotation only; the commit must be applied, not skipped as drift
 * blamed on the rotation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { teamkeys } from '../support/cli.js';
import { newRepo, type Repo } from '../gitops/git-repo.js';
import { startSidecar, type Sidecar } from '../support/sidecar.js';
import { eventually } from './watch-process.js';

const key = (extra: string) => `apiVersion: management.service/v1
kind: OwnedAccessKey
metadata:
  name: backend-ci
${extra}spec:
  user: ci-bot
`;

describe('the sidecar after a hand rotation', () => {
  let sidecar: Sidecar;
  let repo: Repo;

  beforeAll(async () => {
    repo = await newRepo({ withExamples: false });
    repo.write('keys/backend-ci.yaml', key(''));
    await repo.commit('the backend CI key');
    sidecar = await startSidecar(repo.dir);
  });
  afterAll(async () => {
    await sidecar?.stop();
    repo?.cleanup();
  });

  it('applies a commit to a key rotated by hand (teamkeys rotate) instead of reporting drift', async () => {
    const created = await eventually('the first sync created the key', async () => {
      const res = await sidecar.get('ownedaccesskeys/backend-ci');
      return res.status === 200 ? ((await res.json()) as { metadata: { managedFields: { time: string }[] } }) : undefined;
    });
    // A person rotates it by hand some time later (a later second than the sync's write, as any hand rotation is).
    const appliedAt = created.metadata.managedFields[0]!.time;
    await eventually('a second has passed since the sync wrote the key', () => new Date().toISOString().replace(/\.\d+Z$/, 'Z') > appliedAt);
    const rotated = teamkeys(['rotate', 'backend-ci', '--overlap', '1h', '--server', sidecar.served.url], { env: { TEAMKEYS_TOKEN: sidecar.served.adminKey } });
    expect(rotated.code, rotated.stderr).toBe(0);

    repo.write('keys/backend-ci.yaml', key('  annotations:\n    example.com/owner: backend\n').replace('  user: ci-bot\n', '  user: ci-bot\n  description: deploys the backend\n'));
    const revision = await repo.commit('describe the key');
    expect(await sidecar.sync()).toBe(202);
    const done = await eventually('the sync of the new commit reported', () => (sidecar.report().source.revision === revision ? sidecar.report() : undefined));
    const object = done.objects.find((o) => o.name === 'backend-ci');
    expect(object?.changes.filter((c) => c.drift)).toEqual([]);
    expect(object).toMatchObject({ action: 'update' });
    expect(done.outcome).toBe('applied');
    const live = (await (await sidecar.get('ownedaccesskeys/backend-ci')).json()) as { metadata: { annotations: Record<string, string> }; spec: Record<string, string> };
    expect(live.metadata.annotations['example.com/owner']).toBe('backend');
    expect(live.spec.description).toBe('deploys the backend');
  });
});
