/**
 * Two authentication rules the mutation set's tests did not reach, in process: a client over its
 * failed-authentication budget is still served a key that authenticated in the last ten minutes
 * (and only then), and a key of a team being deleted is refused, saying so.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcess } from '../server/in-process.js';
import { ManualClock } from '../support/clock.js';
import { create } from './fixture.js';

describe('a client over its failure budget and a recently valid key', () => {
  let server: InProcess;
  const clock = new ManualClock('2026-11-27T10:00:00Z');
  const keys: Record<string, string> = {};
  const status = async (key: string) => (await server.fetch(`${server.api}/teams`, { headers: { Authorization: `Bearer ${key}` } })).status;

  beforeAll(async () => {
    // Two failures at once, regained only after 1000 s: the third is 429.
    server = await startInProcess({ now: clock.now, failureLimit: { burst: 2, perSecond: 0.001 } });
    for (const name of ['used', 'unused']) {
      const res = await create(server, 'ownedaccesskeys', { metadata: { name }, spec: { user: name } });
      keys[name] = ((await res.json()) as { spec: { key: string } }).spec.key;
    }
    expect(await status(keys.used!)).toBe(200);
    for (let i = 0; i < 2; i++) expect(await status(`Wrong${'w'.repeat(40)}${i}`)).toBe(401);
    expect(await status(`Wrong${'w'.repeat(41)}`)).toBe(429);
  });
  afterAll(() => server.close());

  it('a key never used is refused with the others; one used 9 min 59 s ago is served; at 10 min it is refused too', async () => {
    expect(await status(keys.unused!)).toBe(429);
    clock.advance(599_000);
    expect(await status(keys.used!)).toBe(200);
    // That request renewed it: ten minutes after it, the key counts as a guess again.
    clock.advance(600_000);
    expect(await status(keys.used!)).toBe(429);
  });
});

describe('a key of a team being deleted', () => {
  let server: InProcess;
  beforeAll(async () => {
    server = await startInProcess();
  });
  afterAll(() => server.close());

  it('is refused (401), naming why', async () => {
    expect((await create(server, 'teams', { metadata: { name: 'leaving', finalizers: ['example.com/hold'] }, spec: {} })).status).toBe(201);
    const made = await create(server, 'ownedaccesskeys', { metadata: { name: 'leaving-ci' }, spec: { team: 'leaving' } });
    expect(made.status).toBe(201);
    const key = ((await made.json()) as { spec: { key: string } }).spec.key;
    const use = () => server.fetch(`${server.api}/teams`, { headers: { Authorization: `Bearer ${key}` } });
    expect((await use()).status).toBe(200);
    const deleted = await server.fetch(`${server.api}/teams/leaving`, { method: 'DELETE' });
    expect(deleted.status, await deleted.clone().text()).toBe(200);
    const res = await use();
    expect(res.status).toBe(401);
    expect(((await res.json()) as { message: string }).message).toContain("access key's team is being deleted");
  });
});
