/**
 * Adversarial review of issue 27: a confirmation does not say WHICH rotation (which new value) it
 * confirms. Two rotators that overlap in time (the Action and the daemon, which both do scheduled
 * rotation, or two runs of one workflow) each rotate awaiting confirmation, deliver, and confirm.
 * Interleaved: A rotates (C1), B rotates (C2: C1 is dropped, the held value P kept), B delivers
 * C2, A delivers C1 (overwriting the secret), A confirms -> 200: the overlap of P starts, and the
 * secret holds C1, which no longer works. Every step "succeeded", and CI fails when the overlap
 * ends: the failure the feature is meant to prevent. Expected: a confirmation names what it
 * confirms (e.g. the resourceVersion the rotation returned, honoured as a precondition, or the
 * new value's fingerprint) and is refused (409) when the key has been rotated since.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { KubeObject } from '../../src/api/types.js';
import type { Status } from '../../src/api/errors.js';
import { ClientError, type ApiClient } from '../../src/client/types.js';
import { confirmOwn } from '../../src/gitops/apply/key-writes.js';
import { ManualClock, hour } from '../support/clock.js';
import { startInProcess, type InProcess } from '../server/in-process.js';
import { create, json } from './fixture.js';

const t0 = '2026-11-27T10:00:00Z';
interface Key {
  metadata: { name: string; resourceVersion: string };
  spec: { key?: string };
}

describe('review: a confirmation confirms whatever rotation is pending', () => {
  let server: InProcess | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('a confirmation by the rotator whose value was replaced meanwhile is refused, or its value works', async () => {
    const clock = new ManualClock(t0);
    server = await startInProcess({ now: clock.now });
    const s = server;
    const made = await create(s, 'ownedaccesskeys', { metadata: { name: 'ci' }, spec: { user: 'ci' } });
    const held = ((await made.json()) as Key).spec.key!;
    const post = (spec: Record<string, unknown>, metadata: Record<string, unknown> = {}) =>
      s.fetch(`${s.api}/ownedaccesskeys/ci/rotation`, { method: 'POST', headers: json, body: JSON.stringify({ apiVersion: 'management.service/v1', kind: 'KeyRotation', metadata, spec }) });
    const a = (await (await post({ overlapSeconds: 3600, awaitConfirmation: true })).json()) as Key;
    const b = (await (await post({ overlapSeconds: 3600, awaitConfirmation: true })).json()) as Key;
    let secret = b.spec.key!; // B delivers first
    secret = a.spec.key!; // A delivers last (overwrites the secret)
    // A confirms, naming the rotation it made as best the API lets it (its resourceVersion).
    const confirm = await post({ confirm: true }, { resourceVersion: a.metadata.resourceVersion });
    clock.advance(hour + 1000);
    const use = async (k: string) => (await s.fetch(`${s.api}/ownedaccesskeys/ci`, { headers: { Authorization: `Bearer ${k}` } })).status;
    const outcome = { confirm: confirm.status, secretWorks: await use(secret), held: await use(held), b: await use(b.spec.key!) };
    // integ: { confirm: 200, secretWorks: 401, held: 401, b: 200 } -> the delivered value is dead.
    expect(outcome.confirm === 409 || outcome.secretWorks === 200, JSON.stringify(outcome)).toBe(true);
  });
  it('the scheduled rotation confirms its own rotation past the server\'s record of use, and not another\'s', async () => {
    const clock = new ManualClock(t0);
    server = await startInProcess({ now: clock.now, activityIntervalMs: 1000 });
    const s = server;
    const made = await create(s, 'ownedaccesskeys', { metadata: { name: 'ci' }, spec: { user: 'ci' } });
    const held = ((await made.json()) as Key).spec.key!;
    // Just what confirmOwn needs of an ApiClient, over the in-process server.
    const client = {
      rotate: async (name: string, spec: Record<string, unknown>, opts: { resourceVersion?: string } = {}) => {
        const res = await s.fetch(`${s.api}/ownedaccesskeys/${name}/rotation`, { method: 'POST', headers: json, body: JSON.stringify({ kind: 'KeyRotation', ...(opts.resourceVersion ? { metadata: { resourceVersion: opts.resourceVersion } } : {}), spec }) });
        const body = (await res.json()) as KubeObject & Status;
        if (res.status >= 300) throw new ClientError(body as Status);
        return body;
      },
      get: async (_plural: string, name: string) => (await (await s.fetch(`${s.api}/ownedaccesskeys/${name}`)).json()) as KubeObject,
    } as unknown as ApiClient;
    const mine = await client.rotate('ci', { overlapSeconds: 3600, awaitConfirmation: true });
    // A job uses the held value while the new one is delivered: the server records it (a status write).
    clock.advance(2000);
    expect((await s.fetch(`${s.api}/ownedaccesskeys/ci`, { headers: { Authorization: `Bearer ${held}` } })).status).toBe(200);
    await vi.waitFor(async () => expect((await client.get('ownedaccesskeys', 'ci'))!.metadata.resourceVersion).not.toBe(mine.metadata.resourceVersion));
    const confirmed = await confirmOwn(client, 'ci', mine.metadata);
    expect((confirmed.status as { rotation?: { previousValidUntil?: string } }).rotation?.previousValidUntil).toBeDefined();
    // Another rotator's pending rotation is not confirmed by this one's resourceVersion.
    const first = await client.rotate('ci', { overlapSeconds: 3600, awaitConfirmation: true });
    await client.rotate('ci', { overlapSeconds: 3600, awaitConfirmation: true });
    await expect(confirmOwn(client, 'ci', first.metadata)).rejects.toThrow(/rotated or changed by someone else/);
  });
});
