/**
 * The activity recorder's following of key deletions (auth/activity.ts): started, it forgets a
 * deleted key; stopped, it follows nothing more (its watch ends and no retry starts one again), so
 * memory keeps a key deleted meanwhile until a start catches up. A recorder still running beside it
 * shows the deletion was there to see. The retry's backoff runs on fake timers, not a sleep.
 */
import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ActivityRecorder } from '../../src/auth/activity.js';
import { eventually } from '../support/eventually.js';
import { accessKey, newRegistry } from '../registry/helpers.js';

const log = pino({ level: 'silent' });
/** No use is ever written to the key: only the following of deletions is under test. */
const never = Number.MAX_SAFE_INTEGER;
const at = new Date('2026-01-01T00:00:00Z');
const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

const started: ActivityRecorder[] = [];
afterEach(() => {
  vi.useRealTimers();
  started.splice(0).forEach((r) => r.stop());
});

describe('the activity recorder follows key deletions only while started', () => {
  it('may be stopped before it starts, and twice', () => {
    const { registry } = newRegistry();
    const recorder = new ActivityRecorder(registry.ownedaccesskeys, never, log);
    expect(() => {
      recorder.stop();
      recorder.stop();
    }).not.toThrow();
  });

  it('once stopped forgets no key deleted later, while a running recorder does; a second start changes nothing', async () => {
    const { registry } = newRegistry();
    const keys = registry.ownedaccesskeys;
    for (const name of ['kept', 'probe']) await keys.create(accessKey(name, { user: 'u' }));
    const stopped = new ActivityRecorder(keys, never, log);
    const running = new ActivityRecorder(keys, never, log);
    started.push(stopped, running);
    stopped.start();
    stopped.start();
    running.start();
    await turns(3);
    // A key first used after the start is forgotten on its deletion only through the watch: both follow.
    for (const r of started) for (const name of ['kept', 'probe']) r.touch(name, at);
    await keys.delete('probe');
    await eventually('both recorders forget the deleted key', () => started.every((r) => r.lastUsed('probe') === undefined));

    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    stopped.stop();
    await keys.delete('kept');
    // Past any retry's backoff (1 s, up to 30 s): a stopped recorder starts nothing again.
    await vi.advanceTimersByTimeAsync(60_000);
    vi.useRealTimers();
    await eventually('the running recorder forgets the key deleted after the stop', () => running.lastUsed('kept') === undefined);
    await turns(10);
    expect(stopped.lastUsed('kept')).toBe(at.getTime());
    expect(stopped.size).toBe(1);
  });
});
