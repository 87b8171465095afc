/**
 * Two `teamkeys serve --notifications` processes on one SQLite file: a leak revoked through the
 * replica that does not lead is sent at once by the one that does, once; when the leader stops,
 * the other takes the lease over, sweeps, finds the same leak stored as delivered and sends it
 * again to no one. The process reads the file and its secret from the environment, as deployed.
 */
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.js';
import { startServe, type Served } from '../support/serve-process.js';
import { startReceiver, type TestReceiver } from './receiver.js';

const adminKey = 'AdminKeyForTheNotificationReplicas0123456789abcdef';
const secret = 'replica-hook-secret';

const acquired = (s: Served) => s.stderr().split('\n').filter((l) => l.includes('"msg":"acquired the background-work lease"')).length;

describe('notifications with two replicas on one SQLite file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'teamkeys-notify-replicas-'));
  let receiver: TestReceiver;
  let a: Served;
  let b: Served;
  const stopped = new Set<Served>();
  /** POST /auth/revoke on `s`: the value reported leaked, as whoever found it does. */
  const revoke = (s: Served, value: string) => fetch(`${s.url.replace(/\/kubernetes\/management$/, '')}/auth/revoke`, { method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: `token=${value}` });
  const api = (s: Served, path: string, init: RequestInit = {}) =>
    fetch(`${s.url}/apis/management.service/v1/${path}`, { ...init, headers: { Authorization: `Bearer ${adminKey}`, 'Content-Type': init.method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' } });

  beforeAll(async () => {
    receiver = await startReceiver();
    const file = join(dir, 'notifications.yaml');
    writeFileSync(
      file,
      `apiVersion: notifications.management.service/v1\nkind: Notifications\nspec:\n  receivers:\n    - name: hook\n      webhook:\n        url: ${receiver.url}/hook\n        secretEnv: HOOK_SECRET\n  routes:\n    - receiver: hook\n`,
    );
    const shared = ['--store', `sqlite:${join(dir, 'teamkeys.db')}`, '--encryption-key-file', join(dir, 'encryption.yaml'), '--insecure-http', '--notifications', file];
    const env = { TEAMKEYS_ADMIN_KEY: adminKey, HOOK_SECRET: secret };
    a = await startServe(shared, { env });
    b = await startServe(shared, { env });
    await eventually('one replica holds the lease', () => acquired(a) + acquired(b) === 1, 30_000);
  }, 90_000);
  afterAll(async () => {
    for (const s of [a, b]) if (s && !stopped.has(s)) await s.stop();
    await receiver?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the leader sends a leak revoked through the other replica once, and the next leader does not send it again', async () => {
    const leader = acquired(a) === 1 ? a : b;
    const other = leader === a ? b : a;
    const values: Record<string, string> = {};
    for (const name of ['first', 'second']) {
      const made = await api(other, 'ownedaccesskeys', { method: 'POST', body: JSON.stringify({ metadata: { name }, spec: { user: 'alice' } }) });
      expect(made.status).toBe(201);
      values[name] = ((await made.json()) as { spec: { key: string } }).spec.key;
    }
    expect((await revoke(other, values.first!)).status).toBe(200);
    const [first] = await eventually('the leader sends the leak', () => receiver.received.length > 0 && receiver.received, 30_000);
    expect(JSON.parse(first!.body)).toMatchObject({ event: 'KeyLeaked', key: { name: 'first', owner: 'alice' } });
    expect(first!.headers['x-teamkeys-signature']).toBe(`sha256=${createHmac('sha256', secret).update(first!.body).digest('hex')}`);

    expect(await leader.stop()).toBe(0);
    stopped.add(leader);
    await eventually('the other replica takes the lease over', () => acquired(other) === 1, 30_000);
    // Its first sweep (which finds "first" again) runs before it looks at this change.
    expect((await revoke(other, values.second!)).status).toBe(200);
    await eventually('the new leader sends the second leak', () => receiver.received.some((r) => r.body.includes('"second"')), 30_000);
    expect(receiver.received.map((r) => (JSON.parse(r.body) as { key: { name: string } }).key.name)).toEqual(['first', 'second']);
  }, 90_000);
});
