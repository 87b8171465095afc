/**
 * The daemon's follower of the API (daemon/api-follower.ts) on the failures a review found: a
 * watch whose list failed was left open (buffering until the server ended it, one a second for as
 * long as lists failed), and a stop and start while a list was pending left the old loop running
 * beside the new one. The client stands in for the API, so the list can fail while the watch opens,
 * as a list timing out or answering 5xx does.
 */
import pino from 'pino';
import { afterEach, expect, it } from 'vitest';
import { servedPlurals } from '../../src/api/resources.js';
import type { KubeObject } from '../../src/api/types.js';
import type { ApiClient, ClientEvent, ClientWatch } from '../../src/client/types.js';
import { ApiFollower } from '../../src/daemon/api-follower.js';

/** A client whose watches never deliver, counting watches open and lists asked; `list` answers as set. */
function standIn(list: () => Promise<KubeObject[]>) {
  const counts = { open: 0, lists: 0 };
  const client = {
    watch(): ClientWatch {
      counts.open++;
      let stopped = false;
      let wake: (() => void) | undefined;
      return {
        stop() {
          if (!stopped) counts.open--;
          stopped = true;
          wake?.();
        },
        async *[Symbol.asyncIterator](): AsyncGenerator<ClientEvent> {
          while (!stopped) await new Promise<void>((r) => (wake = r));
        },
      };
    },
    list: () => {
      counts.lists++;
      return list();
    },
  } as unknown as ApiClient;
  return { client, counts };
}

let follower: ApiFollower | undefined;
afterEach(() => follower?.stop());

it('stops the watch it opened when the list fails, every time', async () => {
  const { client, counts } = standIn(() => Promise.reject(new Error('list timed out')));
  follower = new ApiFollower({ client, log: pino({ level: 'silent' }), isManaged: () => true, onChange: () => {} });
  follower.start();
  // Each kind lists, fails, waits a second and tries again.
  await new Promise((r) => setTimeout(r, 2300));
  expect(counts.lists).toBeGreaterThanOrEqual(2 * servedPlurals.length);
  expect(counts.open).toBe(0);
}, 10_000);

it('a stop and start while lists are pending leaves one loop per kind', async () => {
  let answer: (() => void) | undefined;
  const pending = new Promise<void>((r) => (answer = r));
  const { client, counts } = standIn(async () => {
    await pending;
    return [];
  });
  follower = new ApiFollower({ client, log: pino({ level: 'silent' }), isManaged: () => true, onChange: () => {} });
  follower.start();
  follower.stop();
  follower.start();
  answer!();
  // Past the second a loop waits before it watches again.
  await new Promise((r) => setTimeout(r, 1500));
  // The first start's loops ended at their list's answer: only the second start's watches are open.
  expect(counts.open).toBe(servedPlurals.length);
  expect(counts.lists).toBe(2 * servedPlurals.length);
}, 10_000);
