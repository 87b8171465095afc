/**
 * Rotation with an overlap (issue 27), over HTTP on an in-process server whose clock the test
 * moves: both values authenticate during the overlap, the previous one is refused after it with a
 * message naming the rotation, a rotation can wait for its confirmation, status says which value
 * was used, a client cannot extend the previous value's life, and a hand PUT of spec.key is a
 * rotation with no overlap.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock, day, hour } from '../support/clock.js';
import { readEvents, startInProcess, type InProcess } from '../server/in-process.js';
import { create, json } from './fixture.js';
import { eventually } from '../support/eventually.js';

const t0 = '2026-11-27T10:00:00Z';
const iso = (clock: ManualClock) => clock.now().toISOString().replace(/\.\d{3}Z$/, 'Z');

interface Key {
  metadata: { name: string; resourceVersion: string; generation?: number };
  spec: { key?: string; user?: string };
  status?: { lastActivity?: string; rotation?: Record<string, unknown> };
}

describe('rotating an access key with an overlap', () => {
  let server: InProcess | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  async function start(clock: ManualClock, activityIntervalMs?: number): Promise<InProcess> {
    server = await startInProcess({ now: clock.now, ...(activityIntervalMs ? { activityIntervalMs } : {}) });
    return server;
  }
  async function newKey(s: InProcess, name: string, spec: Record<string, unknown> = {}): Promise<string> {
    const res = await create(s, 'ownedaccesskeys', { metadata: { name }, spec: { user: name, ...spec } });
    expect(res.status).toBe(201);
    return ((await res.json()) as Key).spec.key!;
  }
  const rotate = (s: InProcess, name: string, spec: Record<string, unknown>, query = '', token?: string) =>
    s.fetch(`${s.api}/ownedaccesskeys/${name}/rotation${query}`, {
      method: 'POST',
      headers: { ...json, ...(token ? { Authorization: `Bearer ${token}` } : {}) },
      body: JSON.stringify({ apiVersion: 'management.service/v1', kind: 'KeyRotation', spec }),
    });
  const rotated = async (s: InProcess, name: string, spec: Record<string, unknown>): Promise<Key> => {
    const res = await rotate(s, name, spec);
    expect(res.status, await res.clone().text()).toBe(201);
    return (await res.json()) as Key;
  };
  const use = async (s: InProcess, key: string, name: string) => {
    const res = await s.fetch(`${s.api}/ownedaccesskeys/${name}`, { headers: { Authorization: `Bearer ${key}` } });
    return { status: res.status, message: ((await res.json()) as { message?: string }).message };
  };
  const read = async (s: InProcess, name: string) => (await (await s.fetch(`${s.api}/ownedaccesskeys/${name}`)).json()) as Key;
  const refusal = (name: string, rotatedAt: string, until: string) => ({
    status: 401,
    message: `access key "${name}" was rotated at ${rotatedAt}; its previous value stopped working at ${until}`,
  });

  it('both values authenticate during the overlap; after it the previous one gets 401 naming the rotation', async () => {
    const clock = new ManualClock(t0);
    const s = await start(clock);
    const old = await newKey(s, 'ci');
    clock.advance(hour);
    const answer = await rotated(s, 'ci', { overlapSeconds: 3600 });
    const fresh = answer.spec.key!;
    expect(fresh).toMatch(/^tk_[0-9A-Za-z]{49}$/);
    expect(answer.status?.rotation).toEqual({ rotatedAt: '2026-11-27T11:00:00Z', overlapSeconds: 3600, previousValidUntil: '2026-11-27T12:00:00Z' });
    // The new value is shown once: a read has neither value.
    expect((await read(s, 'ci')).spec.key).toBeUndefined();
    expect((await use(s, old, 'ci')).status).toBe(200);
    expect((await use(s, fresh, 'ci')).status).toBe(200);
    clock.advance(hour - 1000);
    expect((await use(s, old, 'ci')).status).toBe(200);
    clock.advance(1000);
    expect(await use(s, old, 'ci')).toEqual(refusal('ci', '2026-11-27T11:00:00Z', '2026-11-27T12:00:00Z'));
    expect((await use(s, fresh, 'ci')).status).toBe(200);
    // Still refused with the rotation's message a month later, and by a watch.
    clock.advance(30 * day);
    expect((await use(s, old, 'ci')).message).toContain('was rotated at 2026-11-27T11:00:00Z');
  });

  it('a watch opened with the previous value ends when the overlap does, with the rotation\'s 401', async () => {
    const clock = new ManualClock(t0);
    const s = await start(clock);
    const old = await newKey(s, 'watcher');
    await rotated(s, 'watcher', { overlapSeconds: 60 });
    const watch = await s.fetch(`${s.api}/ownedaccesskeys?watch=true&fieldSelector=metadata.name%3Dwatcher`, { headers: { Authorization: `Bearer ${old}` } });
    expect(watch.status).toBe(200);
    clock.advance(60_000);
    const events = await readEvents(watch, 2, 5000);
    expect(events.at(-1)).toMatchObject({ type: 'ERROR', object: { code: 401, message: 'access key "watcher" was rotated at 2026-11-27T10:00:00Z; its previous value stopped working at 2026-11-27T10:01:00Z' } });
  });

  it('a given value is taken; a value in use by another key, or the key\'s own, is refused (422 on spec.key)', async () => {
    const clock = new ManualClock(t0);
    const s = await start(clock);
    const mine = await newKey(s, 'mine');
    const theirs = await newKey(s, 'theirs');
    const chosen = `Chosen${'x'.repeat(40)}`;
    expect((await rotated(s, 'mine', { key: chosen, overlapSeconds: 60 })).spec.key).toBe(chosen);
    expect((await use(s, chosen, 'mine')).status).toBe(200);
    for (const taken of [theirs, chosen, mine]) {
      const res = await rotate(s, 'mine', { key: taken });
      expect(res.status).toBe(422);
      expect(((await res.json()) as { details: { causes: { field: string }[] } }).details.causes[0]!.field).toBe('spec.key');
    }
    // Nor may another key take this key's previous value.
    const res = await rotate(s, 'theirs', { key: mine });
    expect(res.status).toBe(422);
    expect(JSON.stringify(await res.json())).not.toContain(mine);
  });

  it('awaitConfirmation keeps the previous value working until the rotation is confirmed; then the overlap runs', async () => {
    const clock = new ManualClock(t0);
    const s = await start(clock);
    const old = await newKey(s, 'deploy');
    const fresh = (await rotated(s, 'deploy', { overlapSeconds: 600, awaitConfirmation: true })).spec.key!;
    expect((await read(s, 'deploy')).status?.rotation).toEqual({ rotatedAt: t0, overlapSeconds: 600, awaitingConfirmation: true });
    clock.advance(10 * day);
    expect((await use(s, old, 'deploy')).status).toBe(200);
    expect((await use(s, fresh, 'deploy')).status).toBe(200);
    const confirmed = await rotate(s, 'deploy', { confirm: true });
    expect(confirmed.status).toBe(200);
    const body = (await confirmed.json()) as Key;
    expect(body.spec.key).toBeUndefined();
    expect(body.status?.rotation).toMatchObject({ rotatedAt: t0, overlapSeconds: 600, previousValidUntil: '2026-12-07T10:10:00Z' });
    expect(body.status?.rotation?.awaitingConfirmation).toBeUndefined();
    // Nothing awaits confirmation any more.
    expect((await rotate(s, 'deploy', { confirm: true })).status).toBe(409);
    clock.advance(599_000);
    expect((await use(s, old, 'deploy')).status).toBe(200);
    clock.advance(1000);
    expect(await use(s, old, 'deploy')).toEqual(refusal('deploy', t0, '2026-12-07T10:10:00Z'));
    expect((await use(s, fresh, 'deploy')).status).toBe(200);
  });

  it('rotating again while confirmation is awaited keeps the value clients hold; during an overlap it drops the older one', async () => {
    const clock = new ManualClock(t0);
    const s = await start(clock);
    const held = await newKey(s, 'k');
    const undelivered = (await rotated(s, 'k', { awaitConfirmation: true, overlapSeconds: 60 })).spec.key!;
    const second = (await rotated(s, 'k', { overlapSeconds: 120 })).spec.key!;
    // The value clients hold still works (the overlap now runs for it); the never-delivered one is gone.
    expect((await use(s, held, 'k')).status).toBe(200);
    expect((await use(s, undelivered, 'k')).status).toBe(401);
    expect((await use(s, second, 'k')).status).toBe(200);
    const third = (await rotated(s, 'k', { overlapSeconds: 120 })).spec.key!;
    expect((await use(s, held, 'k')).status).toBe(401);
    expect((await use(s, second, 'k')).status).toBe(200);
    expect((await use(s, third, 'k')).status).toBe(200);
  });

  it('the previous value obeys every other rule: a disabled key refuses both values', async () => {
    const clock = new ManualClock(t0);
    const s = await start(clock);
    const old = await newKey(s, 'off');
    await rotated(s, 'off', { overlapSeconds: 3600 });
    const res = await s.fetch(`${s.api}/ownedaccesskeys/off`, { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ spec: { disabled: true } }) });
    expect(res.status).toBe(200);
    expect(await use(s, old, 'off')).toEqual({ status: 401, message: 'access key is disabled' });
  });

  it('status tells which value was used last and when the previous one was last used (at most one write a minute)', async () => {
    const clock = new ManualClock(t0);
    const s = await start(clock, 60_000);
    const old = await newKey(s, 'job');
    expect((await use(s, old, 'job')).status).toBe(200);
    await eventually('status.lastActivity is t0', async () => (await read(s, 'job')).status?.lastActivity === t0);
    clock.advance(2 * 60_000);
    const fresh = (await rotated(s, 'job', { overlapSeconds: 3600 })).spec.key!;
    // The last use recorded was by the value that is now the previous one.
    expect((await read(s, 'job')).status?.rotation).toMatchObject({ lastUsedValue: 'Previous', previousLastActivity: t0 });
    clock.advance(2 * 60_000);
    expect((await use(s, old, 'job')).status).toBe(200);
    await eventually('status.lastActivity is 10:04:00', async () => (await read(s, 'job')).status?.lastActivity === '2026-11-27T10:04:00Z');
    expect((await read(s, 'job')).status?.rotation).toMatchObject({ lastUsedValue: 'Previous', previousLastActivity: '2026-11-27T10:04:00Z' });
    // Within the minute: remembered, not written.
    clock.advance(10_000);
    expect((await use(s, old, 'job')).status).toBe(200);
    clock.advance(60_000);
    expect((await use(s, fresh, 'job')).status).toBe(200);
    await eventually('status.lastActivity is 10:05:10', async () => (await read(s, 'job')).status?.lastActivity === '2026-11-27T10:05:10Z');
    // The write names the value of the latest use, and carries the previous value's use made in between.
    expect((await read(s, 'job')).status?.rotation).toMatchObject({ lastUsedValue: 'Current', previousLastActivity: '2026-11-27T10:04:10Z' });
  });

  it('status.rotation cannot be forged: PUT and PATCH of status, PUT, merge patch and apply of the key keep it as the server wrote it', async () => {
    const clock = new ManualClock(t0);
    const s = await start(clock);
    const old = await newKey(s, 'forged');
    await rotated(s, 'forged', { overlapSeconds: 60 });
    const far = '2099-01-01T00:00:00Z';
    const forged = { rotatedAt: t0, overlapSeconds: 60, previousValidUntil: far };
    const current = await read(s, 'forged');
    const writes: [string, string, string, unknown][] = [
      ['PUT', '/status', 'application/json', { ...current, status: { rotation: forged } }],
      ['PATCH', '/status', 'application/merge-patch+json', { status: { rotation: { previousValidUntil: far, awaitingConfirmation: true } } }],
      ['PATCH', '/status', 'application/json-patch+json', [{ op: 'replace', path: '/status/rotation/previousValidUntil', value: far }]],
      ['PATCH', '/status', 'application/merge-patch+json', { status: null }],
      ['PUT', '', 'application/json', { ...(await read(s, 'forged')), status: { rotation: forged } }],
      ['PATCH', '', 'application/merge-patch+json', { status: { rotation: { previousValidUntil: far } } }],
      ['PATCH', '?fieldManager=forger&force=true', 'application/apply-patch+yaml', { apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', metadata: { name: 'forged' }, spec: { user: 'forged' }, status: { rotation: forged } }],
    ];
    for (const [method, path, type, body] of writes) {
      let payload = body;
      if (method === 'PUT') payload = { ...(body as Key), metadata: { ...(body as Key).metadata, resourceVersion: (await read(s, 'forged')).metadata.resourceVersion } };
      const res = await s.fetch(`${s.api}/ownedaccesskeys/forged${path}`, { method, headers: { 'Content-Type': type }, body: JSON.stringify(payload) });
      expect(res.status, `${method} ${path} ${type}: ${await res.clone().text()}`).toBeLessThan(300);
      expect(((await res.json()) as Key).status?.rotation?.previousValidUntil, `${method} ${path} ${type}`).toBe('2026-11-27T10:01:00Z');
    }
    expect((await read(s, 'forged')).status?.rotation).toEqual({ rotatedAt: t0, overlapSeconds: 60, previousValidUntil: '2026-11-27T10:01:00Z' });
    clock.advance(61_000);
    expect(await use(s, old, 'forged')).toEqual(refusal('forged', t0, '2026-11-27T10:01:00Z'));
  });

  it('a PUT or JSON patch that sets spec.key is a rotation with no overlap: the old value is refused at once, naming it', async () => {
    const clock = new ManualClock(t0);
    const s = await start(clock);
    const old = await newKey(s, 'hand');
    const current = await read(s, 'hand');
    const byHand = `ByHand${'y'.repeat(40)}`;
    const put = await s.fetch(`${s.api}/ownedaccesskeys/hand`, { method: 'PUT', headers: json, body: JSON.stringify({ ...current, spec: { ...current.spec, key: byHand } }) });
    expect(put.status).toBe(200);
    expect(((await put.json()) as Key).status?.rotation).toEqual({ rotatedAt: t0, overlapSeconds: 0, previousValidUntil: t0 });
    expect(await use(s, old, 'hand')).toEqual(refusal('hand', t0, t0));
    expect((await use(s, byHand, 'hand')).status).toBe(200);
    clock.advance(60_000);
    const patched = `Patched${'z'.repeat(40)}`;
    const patch = await s.fetch(`${s.api}/ownedaccesskeys/hand`, { method: 'PATCH', headers: { 'Content-Type': 'application/json-patch+json' }, body: JSON.stringify([{ op: 'add', path: '/spec/key', value: patched }]) });
    expect(patch.status).toBe(200);
    expect(await use(s, byHand, 'hand')).toEqual(refusal('hand', '2026-11-27T10:01:00Z', '2026-11-27T10:01:00Z'));
    // The first value is no longer even the previous one: an ordinary 401.
    expect(await use(s, old, 'hand')).toEqual({ status: 401, message: 'Unauthorized' });
    // A write that leaves spec.key alone is no rotation.
    const relabel = await s.fetch(`${s.api}/ownedaccesskeys/hand`, { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ metadata: { labels: { a: 'b' } } }) });
    expect(((await relabel.json()) as Key).status?.rotation?.rotatedAt).toBe('2026-11-27T10:01:00Z');
    expect((await use(s, patched, 'hand')).status).toBe(200);
  });

  it('bad bodies: 422 naming the field, 400 for a wrong kind or (Strict) an unknown field, 404 for a missing key, 405 for GET', async () => {
    const clock = new ManualClock(t0);
    const s = await start(clock);
    const old = await newKey(s, 'bad');
    const cases: [Record<string, unknown>, string][] = [
      [{ overlapSeconds: -1 }, 'spec.overlapSeconds'],
      [{ overlapSeconds: 2_592_001 }, 'spec.overlapSeconds'],
      [{ overlapSeconds: 1.5 }, 'spec.overlapSeconds'],
      [{ overlapSeconds: '1h' }, 'spec.overlapSeconds'],
      [{ key: 'short' }, 'spec.key'],
      [{ key: `${'a'.repeat(40)}!` }, 'spec.key'],
      [{ awaitConfirmation: 'yes' }, 'spec.awaitConfirmation'],
      [{ confirm: true, overlapSeconds: 5 }, 'spec.confirm'],
    ];
    for (const [spec, field] of cases) {
      const res = await rotate(s, 'bad', spec);
      const body = (await res.json()) as { reason: string; message: string; details: { kind: string; causes: { field: string }[] } };
      expect(res.status, JSON.stringify(spec)).toBe(422);
      expect(body.reason).toBe('Invalid');
      expect(body.details.kind).toBe('KeyRotation');
      expect(body.details.causes.map((c) => c.field)).toEqual([field]);
      expect(body.message).not.toContain(`${'a'.repeat(40)}!`);
    }
    const wrongKind = await s.fetch(`${s.api}/ownedaccesskeys/bad/rotation`, { method: 'POST', headers: json, body: JSON.stringify({ kind: 'OwnedAccessKey', spec: {} }) });
    expect(wrongKind.status).toBe(400);
    const strict = await rotate(s, 'bad', { overlapSeconds: 5, overlap: '1h' }, '?fieldValidation=Strict');
    expect(strict.status).toBe(400);
    expect(((await strict.json()) as { message: string }).message).toContain('unknown field "spec.overlap"');
    const warned = await rotate(s, 'bad', { overlapSeconds: 5, overlap: '1h' });
    expect(warned.status).toBe(201);
    expect(warned.headers.get('warning')).toContain('unknown field \\"spec.overlap\\"');
    expect((await rotate(s, 'nosuchkey', {})).status).toBe(404);
    expect((await s.fetch(`${s.api}/ownedaccesskeys/bad/rotation`)).status).toBe(405);
    expect((await s.fetch(`${s.api}/teams/bad/rotation`, { method: 'POST', headers: json, body: '{}' })).status).toBe(404);
    // Nothing above rotated anything but the warned rotation.
    expect((await use(s, old, 'bad')).status).toBe(200);
  });

  it('dryRun rotates nothing: the old value works alone, the value shown does not', async () => {
    const clock = new ManualClock(t0);
    const s = await start(clock);
    const old = await newKey(s, 'dry');
    const res = await rotate(s, 'dry', { overlapSeconds: 0 }, '?dryRun=All');
    expect(res.status).toBe(201);
    const shown = ((await res.json()) as Key).spec.key!;
    expect((await read(s, 'dry')).status?.rotation).toBeUndefined();
    expect((await use(s, old, 'dry')).status).toBe(200);
    expect((await use(s, shown, 'dry')).status).toBe(401);
  });

  it('is authorized as an update of the key: its owner may, another user may not, a read-only scope may not, a scope allowing updates may', async () => {
    const clock = new ManualClock(t0);
    const s = await start(clock);
    const own = await newKey(s, 'own');
    const other = await newKey(s, 'other');
    const reader = await newKey(s, 'own-reader', { user: 'own', scope: { rules: [{ verbs: ['get', 'list'], resources: [{ group: 'management.service', resources: ['ownedaccesskeys'] }] }] } });
    const updater = await newKey(s, 'own-updater', { user: 'own', scope: { rules: [{ verbs: ['update'], resources: [{ group: 'management.service', resources: ['ownedaccesskeys'] }] }] } });
    const rotator = await newKey(s, 'own-rotator', { user: 'own', scope: { rules: [{ verbs: ['update'], resources: [{ group: 'management.service', resources: ['ownedaccesskeys/rotation'] }] }] } });
    const statusOnly = await newKey(s, 'own-status', { user: 'own', scope: { rules: [{ verbs: ['update'], resources: [{ group: 'management.service', resources: ['ownedaccesskeys/status'] }] }] } });
    expect((await rotate(s, 'own', { overlapSeconds: 60 }, '', own)).status).toBe(201);
    const denied = await rotate(s, 'own', {}, '', other);
    expect(denied.status).toBe(403);
    expect(((await denied.json()) as { message: string }).message).toContain('cannot update resource "ownedaccesskeys"');
    // Whether a key exists is not told to who may not update it.
    expect((await rotate(s, 'nosuchkey', {}, '', other)).status).toBe(403);
    expect((await rotate(s, 'own', {}, '', reader)).status).toBe(403);
    expect((await rotate(s, 'own', {}, '', statusOnly)).status).toBe(403);
    // A scoped key rotating itself: allowed by a scope that allows updates, or names the subresource.
    const byUpdater = await rotate(s, 'own-updater', { overlapSeconds: 60 }, '', updater);
    expect(byUpdater.status, await byUpdater.clone().text()).toBe(201);
    expect((await rotate(s, 'own-rotator', { overlapSeconds: 60 }, '', rotator)).status).toBe(201);
    expect((await rotate(s, 'own-status', {}, '', statusOnly)).status).toBe(403);
    // Rotating an unscoped key from a scoped one would hand it a wider key: refused as a spec.key patch is.
    const updaterNow = ((await byUpdater.json()) as Key).spec.key!;
    const wider = await rotate(s, 'own', {}, '', updaterNow);
    const ownNow = await read(s, 'own');
    const put = await s.fetch(`${s.api}/ownedaccesskeys/own`, {
      method: 'PUT',
      headers: { ...json, Authorization: `Bearer ${updaterNow}` },
      body: JSON.stringify({ ...ownNow, spec: { ...ownNow.spec, key: `Wider${'w'.repeat(40)}` } }),
    });
    expect(wider.status).toBe(403);
    expect(((await wider.json()) as { message: string }).message).toContain("a key made or widened by a scoped key needs a scope within that key's scope");
    expect(put.status).toBe(403);
    expect(((await put.json()) as { message: string }).message).toContain("a key made or widened by a scoped key needs a scope within that key's scope");
  });
});
