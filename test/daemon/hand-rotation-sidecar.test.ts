/**
 * Issue 40, point 1, over real processes: the sidecar in its default report-only mode, a key
 * rotated by hand with `teamkeys rotate`, then a commit adding fields to that key. The rotation
 * wrote the value and status.rotation only; the commit must be applied, not skipped as drift
 * blamed on the rotation.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Report } from '../../src/gitops/report/report.js';
import { teamkeys } from '../support/cli.js';
import { newRepo, type Repo } from '../gitops/git-repo.js';
import { startServe, type Served } from '../server/serve-process.js';
import { eventually } from './watch-process.js';

const key = (extra: string) => `apiVersion: management.service/v1
kind: OwnedAccessKey
metadata:
  name: backend-ci
${extra}spec:
  user: ci-bot
`;

describe('the sidecar after a hand rotation', () => {
  let served: Served;
  let repo: Repo;
  const api = () => `${served.url}/apis/management.service/v1`;
  const auth = () => ({ Authorization: `Bearer ${served.adminKey}` });
  const report = () => JSON.parse(readFileSync(join(served.dir, 'sync', 'report.json'), 'utf8')) as Report;

  beforeAll(async () => {
    repo = await newRepo({ withExamples: false });
    repo.write('keys/backend-ci.yaml', key(''));
    await repo.commit('the backend CI key');
    served = await startServe(['--insecure-http', '--sync-source', repo.dir, '--sync-ref', 'main', '--sync-interval', '1h']);
  });
  afterAll(async () => {
    await served?.stop();
    repo?.cleanup();
  });

  it('applies a commit to a key rotated by hand (teamkeys rotate) instead of reporting drift', async () => {
    const created = await eventually('the first sync created the key', async () => {
      const res = await fetch(`${api()}/ownedaccesskeys/backend-ci`, { headers: auth() });
      return res.status === 200 ? ((await res.json()) as { metadata: { managedFields: { time: string }[] } }) : undefined;
    });
    // A person rotates it by hand some time later (a later second than the sync's write, as any hand rotation is).
    const appliedAt = created.metadata.managedFields[0]!.time;
    await eventually('a second has passed since the sync wrote the key', () => new Date().toISOString().replace(/\.\d+Z$/, 'Z') > appliedAt);
    const rotated = teamkeys(['rotate', 'backend-ci', '--overlap', '1h', '--server', served.url], { env: { TEAMKEYS_TOKEN: served.adminKey } });
    expect(rotated.code, rotated.stderr).toBe(0);

    repo.write('keys/backend-ci.yaml', key('  annotations:\n    example.com/owner: backend\n').replace('  user: ci-bot\n', '  user: ci-bot\n  description: deploys the backend\n'));
    const revision = await repo.commit('describe the key');
    expect((await fetch(`${new URL(served.url).origin}/sync`, { method: 'POST', headers: auth() })).status).toBe(202);
    const done = await eventually('the sync of the new commit reported', () => (report().source.revision === revision ? report() : undefined));
    const object = done.objects.find((o) => o.name === 'backend-ci');
    expect(object?.changes.filter((c) => c.drift)).toEqual([]);
    expect(object).toMatchObject({ action: 'update' });
    expect(done.outcome).toBe('applied');
    const live = (await (await fetch(`${api()}/ownedaccesskeys/backend-ci`, { headers: auth() })).json()) as { metadata: { annotations: Record<string, string> }; spec: Record<string, string> };
    expect(live.metadata.annotations['example.com/owner']).toBe('backend');
    expect(live.spec.description).toBe('deploys the backend');
  });
});
