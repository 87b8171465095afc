/**
 * A rotation whose answer is lost can be retried (issue 41, found point 7): the KeyRotation body may
 * carry spec.idempotencyKey, recorded with the rotation in the same write; a retry with it gets
 * that rotation back (200, no value) instead of a second one, and a server-made value is said to be
 * lost for good, with how to recover. Over HTTP, on an in-process server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcess } from '../server/in-process.js';
import { create, json } from './fixture.js';

interface Key {
  metadata: { name: string; resourceVersion: string };
  spec: { key?: string };
  status?: { rotation?: { rotatedAt?: string; idempotencyKey?: string; awaitingConfirmation?: boolean } };
}

describe('rotation with an idempotency key', () => {
  let s: InProcess;
  beforeAll(async () => {
    s = await startInProcess({});
  });
  afterAll(() => s.close());

  const newKey = async (name: string) => {
    const res = await create(s, 'ownedaccesskeys', { metadata: { name }, spec: { user: name } });
    expect(res.status).toBe(201);
    return ((await res.json()) as Key).spec.key!;
  };
  const rotate = (name: string, spec: Record<string, unknown>, metadata: Record<string, unknown> = {}) =>
    s.fetch(`${s.api}/ownedaccesskeys/${name}/rotation`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ apiVersion: 'management.service/v1', kind: 'KeyRotation', metadata, spec }),
    });
  const authenticates = async (value: string) => (await s.fetch(`${s.api}/ownedaccesskeys`, { headers: { Authorization: `Bearer ${value}` } })).status !== 401;

  it('the same request twice rotates once; the retry answers 200 without the value and says it cannot be shown again', async () => {
    const old = await newKey('idem-a');
    const before = (await (await s.fetch(`${s.api}/ownedaccesskeys/idem-a`)).json()) as Key;
    const spec = { overlapSeconds: 3600, awaitConfirmation: true, idempotencyKey: '7f1c2a9e-0b1d-4c55-9a57-1e2f3a4b5c6d' };
    const first = await rotate('idem-a', spec, { resourceVersion: before.metadata.resourceVersion });
    expect(first.status).toBe(201);
    const made = (await first.json()) as Key;
    expect(made.spec.key).toMatch(/^tk_[0-9A-Za-z]{49}$/);
    expect(made.status?.rotation?.idempotencyKey).toBe(spec.idempotencyKey);

    // The answer was lost; the client sends the very same request again (same precondition too).
    const retry = await rotate('idem-a', spec, { resourceVersion: before.metadata.resourceVersion });
    expect(retry.status).toBe(200);
    const again = (await retry.json()) as Key;
    expect(again.spec.key).toBeUndefined();
    expect(again.metadata.resourceVersion).toBe(made.metadata.resourceVersion);
    expect(again.status?.rotation?.rotatedAt).toBe(made.status?.rotation?.rotatedAt);
    const warning = retry.headers.get('warning') ?? '';
    expect(warning).toContain(`the rotation with idempotency key ${spec.idempotencyKey} was made at ${made.status!.rotation!.rotatedAt}`);
    expect(warning).toContain('cannot be shown again');
    expect(warning).toContain('rotate again with a new idempotency key');
    expect(warning).not.toContain(made.spec.key);
    // Rotated once: the first answer's value is the current one, the old one still the previous.
    expect(await authenticates(made.spec.key!)).toBe(true);
    expect(await authenticates(old)).toBe(true);

    // A different idempotency key is a new rotation; the first rotation's value is dropped (it awaited confirmation).
    const next = await rotate('idem-a', { ...spec, idempotencyKey: 'second-attempt' });
    expect(next.status).toBe(201);
    const newer = (await next.json()) as Key;
    expect(newer.spec.key).toMatch(/^tk_[0-9A-Za-z]{49}$/);
    expect(newer.spec.key).not.toBe(made.spec.key);
    expect(await authenticates(newer.spec.key!)).toBe(true);
    expect(await authenticates(made.spec.key!)).toBe(false);
  });

  it('a client-made value retried is the same rotation, and its answer says the value is the one sent', async () => {
    await newKey('idem-b');
    const spec = { key: `Given${'v'.repeat(59)}`, overlapSeconds: 60, idempotencyKey: 'idem-b-1' };
    expect((await rotate('idem-b', spec)).status).toBe(201);
    const retry = await rotate('idem-b', spec);
    expect(retry.status).toBe(200);
    expect(retry.headers.get('warning')).toContain("nothing was changed: the key's value is the one this request carries");
  });

  it('the same idempotency key with other parameters is refused (409), and a malformed one is 422', async () => {
    await newKey('idem-c');
    expect((await rotate('idem-c', { overlapSeconds: 60, idempotencyKey: 'idem-c-1' })).status).toBe(201);
    const other = await rotate('idem-c', { overlapSeconds: 120, idempotencyKey: 'idem-c-1' });
    expect(other.status).toBe(409);
    expect(((await other.json()) as { message: string }).message).toContain('with other parameters: an idempotency key names one request');
    const bad = await rotate('idem-c', { idempotencyKey: 'has spaces' });
    expect(bad.status).toBe(422);
    expect(((await bad.json()) as { message: string }).message).toContain('spec.idempotencyKey');
  });
});
