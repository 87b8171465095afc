/**
 * `teamkeys rotate --key-file` confirms the rotation it made, and no other: two runs overlapping
 * (a cron and a person, or a run and the reconciler's schedule) each rotate awaiting confirmation;
 * the first confirming without a precondition confirmed the second's value while its own file held
 * a dead one, and the second's confirmation then failed (found by a review). Now the confirmation
 * names the resourceVersion its rotation returned: the first run is told, the second confirms.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/client/http.js';
import { confirmRotation } from '../../src/cli/commands/rotate.js';
import { adminKey, startInProcess, type InProcess } from '../support/in-process.js';
import { eventually } from '../support/eventually.js';

describe('confirming a rotation made by --key-file', () => {
  let s: InProcess;
  beforeAll(async () => {
    // Every use recorded at once (status.lastActivity): a write between the rotation and its confirmation.
    s = await startInProcess({ activityIntervalMs: 1 });
  });
  afterAll(() => s.close());

  const works = async (key: string) => (await fetch(`${s.api}/teams`, { headers: { Authorization: `Bearer ${key}` } })).status;

  it('a rotation replaced before its confirmation is refused with the reason, and the one that replaced it confirms', async () => {
    const made = await s.fetch(`${s.api}/ownedaccesskeys`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ metadata: { name: 'ci' }, spec: { user: 'admin' } }) });
    const original = ((await made.json()) as { spec: { key: string } }).spec.key;
    const [a, b] = [new HttpClient({ server: s.base, token: adminKey }), new HttpClient({ server: s.base, token: adminKey })];
    try {
      const rotatedA = await a.rotate('ci', { overlapSeconds: 60, awaitConfirmation: true, idempotencyKey: 'run-a' }, { fieldManager: 'teamkeys' });
      const rotatedB = await b.rotate('ci', { overlapSeconds: 60, awaitConfirmation: true, idempotencyKey: 'run-b' }, { fieldManager: 'teamkeys' });
      const opts = { apiGroup: 'management.service' };
      await expect(confirmRotation(a, 'ci', rotatedA, '/tmp/ci.key', opts)).rejects.toThrow(
        "ownedaccesskey.management.service/ci: another rotation replaced this one before it was confirmed, so the value in /tmp/ci.key is not the key's and stops working: run teamkeys rotate ci again",
      );
      await confirmRotation(b, 'ci', rotatedB, '/tmp/ci.key', opts);
      const valueB = (rotatedB.spec as { key: string }).key;
      expect([await works((rotatedA.spec as { key: string }).key), await works(valueB), await works(original)]).toEqual([401, 200, 200]);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it("a write that is not another rotation (the server's record of the key's use) does not stop the confirmation", async () => {
    const made = await s.fetch(`${s.api}/ownedaccesskeys`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ metadata: { name: 'busy' }, spec: { user: 'admin' } }) });
    const original = ((await made.json()) as { spec: { key: string } }).spec.key;
    const client = new HttpClient({ server: s.base, token: adminKey });
    try {
      const rotated = await client.rotate('busy', { overlapSeconds: 60, awaitConfirmation: true, idempotencyKey: 'run-c' }, { fieldManager: 'teamkeys' });
      // The previous value still works while the rotation awaits confirmation: its use is recorded.
      expect(await works(original)).toBe(200);
      await eventually('the use is recorded', async () => ((await (await s.fetch(`${s.api}/ownedaccesskeys/busy`)).json()) as { metadata: { resourceVersion: string } }).metadata.resourceVersion !== rotated.metadata.resourceVersion);
      const confirmed = await confirmRotation(client, 'busy', rotated, '/tmp/busy.key', { apiGroup: 'management.service' });
      expect((confirmed.status as { rotation?: { awaitingConfirmation?: boolean } }).rotation?.awaitingConfirmation).not.toBe(true);
      expect(await works((rotated.spec as { key: string }).key)).toBe(200);
    } finally {
      await client.close();
    }
  });
});

