/**
 * Issue 40, point 1: a key rotated by hand (`teamkeys rotate`, the rotation subresource) must still
 * take the fields git adds to it afterwards. A rotation writes the value and status.rotation only;
 * it cannot have removed a field of spec or metadata, so a field git adds later is a change from
 * git, not drift blamed on the rotation. The rotation happens at seeded moments around the applies
 * (the same second, the next one, much later), with and without the audit trail the reconciler reads.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/client/http.js';
import { reconcile } from '../../src/gitops/reconcile.js';
import { ManualClock } from '../support/clock.js';
import { seededRandom, testSeed } from '../support/seeded-random.js';
import { adminKey, startInProcess, type InProcess } from '../server/in-process.js';

const key = (annotations: Record<string, string>, spec: Record<string, string>) => `apiVersion: management.service/v1
kind: OwnedAccessKey
metadata:
  name: backend-ci
  annotations: ${JSON.stringify(annotations)}
spec: ${JSON.stringify({ user: 'ci-bot', ...spec })}
`;

/** Gaps between the events, in ms: inside one second, across a second's edge, minutes and days later. */
const gaps = [0, 1, 400, 999, 1000, 1001, 1500, 59_000, 3_600_000, 86_400_000];

const seed = testSeed(40);
const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanup.splice(0)) await c();
});

async function scenario(run: number, audit: boolean) {
  const random = seededRandom(seed * 1000 + run);
  const gap = () => gaps[Math.floor(random() * gaps.length)]!;
  const clock = new ManualClock(Date.parse('2026-11-27T10:00:00Z') + Math.floor(random() * 1000));
  const server: InProcess = await startInProcess({ now: clock.now, audit });
  const client = new HttpClient({ server: server.base, token: adminKey });
  const source = mkdtempSync(join(tmpdir(), 'teamkeys-hand-rotation-'));
  cleanup.push(async () => {
    await client.close();
    await server.close();
    rmSync(source, { recursive: true, force: true });
  });
  // The daemon's default: drift is reported and its object skipped, git's own changes applied.
  const apply = async () =>
    (await reconcile({ mode: 'apply', client, source: { source, sourceId: 'ci-keys' }, prune: false, allowEmpty: false, maxPrune: 10, concurrency: 2, reportDriftOnly: true, now: clock.now })).report;
  const rotateByHand = async () => {
    const res = await server.fetch(`${server.api}/ownedaccesskeys/backend-ci/rotation?fieldManager=teamkeys`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'management.service/v1', kind: 'KeyRotation', spec: { overlapSeconds: 3600 } }),
    });
    expect(res.status).toBe(201);
  };
  const commits = [
    key({}, {}),
    key({ 'example.com/owner': 'backend' }, {}),
    key({ 'example.com/owner': 'backend' }, { description: 'deploys the backend' }),
    key({ 'example.com/owner': 'backend', 'example.com/tier': 'prod' }, { description: 'deploys the backend', displayName: 'Backend CI' }),
  ];
  const story: string[] = [];
  for (const [i, text] of commits.entries()) {
    writeFileSync(join(source, 'key.yaml'), text);
    // Before this commit's apply: maybe a hand rotation, at a seeded moment.
    if (i > 0 && random() < 0.8) {
      const g = gap();
      clock.advance(g);
      await rotateByHand();
      story.push(`rotate +${g}ms`);
    }
    const g = gap();
    clock.advance(g);
    const report = await apply();
    story.push(`apply ${i} +${g}ms`);
    const object = report.objects.find((o) => o.name === 'backend-ci');
    const what = `seed ${seed} run ${run}, audit ${audit}: ${story.join(', ')}`;
    expect(object?.changes.filter((c) => c.drift) ?? [], what).toEqual([]);
    expect(object?.action, what).toBe(i === 0 ? 'create' : 'update');
    expect(report.outcome, what).toBe('applied');
  }
  const live = await client.get('ownedaccesskeys', 'backend-ci');
  expect(live?.metadata.annotations).toMatchObject({ 'example.com/owner': 'backend', 'example.com/tier': 'prod' });
  expect(live?.spec).toMatchObject({ description: 'deploys the backend', displayName: 'Backend CI' });
}

describe(`a key rotated by hand takes the changes committed after it (TEAMKEYS_TEST_SEED=${seed})`, () => {
  for (const audit of [false, true]) {
    it(`at seeded moments around the applies, ${audit ? 'with' : 'without'} the audit trail`, async () => {
      for (let run = 0; run < 6; run++) await scenario(run, audit);
    });
  }
});
