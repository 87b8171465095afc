/**
 * Adversarial review of issue 27: the access reviews (can-i / SelfSubjectAccessReview, and the
 * access review built on the same decide()) against the request path for the new rotation
 * subresource, and status.rotation on create.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../support/clock.js';
import { startInProcess, type InProcess } from '../server/in-process.js';
import { create, json } from './fixture.js';

const t0 = '2026-11-27T10:00:00Z';
interface Key {
  metadata: { name: string };
  spec: { key?: string };
  status?: Record<string, unknown>;
}

describe('review: rotation subresource vs access reviews; status.rotation on create', () => {
  let server: InProcess | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  const newKey = async (s: InProcess, name: string, spec: Record<string, unknown> = {}) => {
    const res = await create(s, 'ownedaccesskeys', { metadata: { name }, spec: { user: name, ...spec } });
    expect(res.status).toBe(201);
    return ((await res.json()) as Key).spec.key!;
  };
  const rotate = (s: InProcess, name: string, token: string) =>
    s.fetch(`${s.api}/ownedaccesskeys/${name}/rotation`, {
      method: 'POST',
      headers: { ...json, Authorization: `Bearer ${token}` },
      body: JSON.stringify({ apiVersion: 'management.service/v1', kind: 'KeyRotation', spec: { overlapSeconds: 60 } }),
    });
  const canI = async (s: InProcess, token: string, attrs: Record<string, string>) => {
    const res = await s.fetch(`${s.base}/kubernetes/management/apis/authorization.k8s.io/v1/selfsubjectaccessreviews`, {
      method: 'POST',
      headers: { ...json, Authorization: `Bearer ${token}` },
      body: JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { group: 'management.service', resource: 'ownedaccesskeys', ...attrs } } }),
    });
    expect(res.status).toBe(201);
    return ((await res.json()) as { status: { allowed: boolean } }).status.allowed;
  };

  it('can-i agrees with the request path on ownedaccesskeys/rotation', async () => {
    const clock = new ManualClock(t0);
    server = await startInProcess({ now: clock.now });
    const s = server;
    // A key whose scope allows only the rotation subresource: it can rotate itself...
    const rotator = await newKey(s, 'rot', { scope: { rules: [{ verbs: ['update'], resources: [{ group: 'management.service', resources: ['ownedaccesskeys/rotation'] }] }] } });
    const plain = await newKey(s, 'plain');
    const answers = {
      rotatorRotates: (await rotate(s, 'rot', rotator)).status,
      plainRotates: (await rotate(s, 'plain', plain)).status,
    };
    // ...but every access review says it cannot (decide.ts: subresources has no `rotation`, so
    // "ownedaccesskeys/rotation does not serve update|create"), for either key.
    const reviews = {
      rotatorCanUpdate: await canI(s, rotator, { verb: 'update', subresource: 'rotation', name: 'rot' }),
      rotatorCanCreate: await canI(s, rotator, { verb: 'create', subresource: 'rotation', name: 'rot' }),
      plainCanUpdate: await canI(s, plain, { verb: 'update', subresource: 'rotation', name: 'plain' }),
    };
    expect(answers).toEqual({ rotatorRotates: 201, plainRotates: 201 });
    // Expected: at least one verb the review answers for the subresource matches the 201s above. integ: all false.
    expect(reviews.rotatorCanUpdate || reviews.rotatorCanCreate).toBe(true);
    expect(reviews.plainCanUpdate).toBe(true);
  });

  it('a create cannot carry a forged status.rotation', async () => {
    const clock = new ManualClock(t0);
    server = await startInProcess({ now: clock.now });
    const s = server;
    const res = await create(s, 'ownedaccesskeys', {
      metadata: { name: 'forged' },
      spec: { user: 'forged' },
      status: { rotation: { rotatedAt: '2020-01-01T00:00:00Z', overlapSeconds: 1, awaitingConfirmation: true, previousValidUntil: '2099-01-01T00:00:00Z', lastUsedValue: 'Previous' } },
    });
    expect(res.status).toBe(201);
    const read = (await (await s.fetch(`${s.api}/ownedaccesskeys/forged`)).json()) as Key;
    expect(read.status?.rotation).toBeUndefined();
  });
  it('can-i agrees with the request path for scopes naming the key itself, and for read-only scopes', async () => {
    const clock = new ManualClock(t0);
    server = await startInProcess({ now: clock.now });
    const s = server;
    const rule = (verbs: string[], resources: string[]) => ({ scope: { rules: [{ verbs, resources: [{ group: 'management.service', resources }] }] } });
    const cases = [
      { name: 'patcher', spec: rule(['patch'], ['ownedaccesskeys']) },
      { name: 'updater', spec: rule(['update'], ['ownedaccesskeys']) },
      { name: 'reader', spec: rule(['get', 'list'], ['ownedaccesskeys', 'ownedaccesskeys/*']) },
      { name: 'status', spec: rule(['update'], ['ownedaccesskeys/status']) },
    ];
    for (const c of cases) {
      const token = await newKey(s, c.name, c.spec);
      const review = await canI(s, token, { verb: 'update', subresource: 'rotation', name: c.name });
      const rotated = (await rotate(s, c.name, token)).status;
      expect({ key: c.name, review, rotated: rotated === 201 }).toEqual({ key: c.name, review: rotated === 201, rotated: rotated === 201 });
    }
  });
});
