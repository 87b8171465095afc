/** The one loop of every background controller (src/background/periodic-runner.ts), by the order of what it does. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { PeriodicRunner } from '../../src/background/periodic-runner.js';

/** A pass the test ends by hand; `events` is the order things happened in. */
function heldRunner(intervalMs = 60_000) {
  const events: string[] = [];
  const releases: (() => void)[] = [];
  let passes = 0;
  const errors: unknown[] = [];
  const runner = new PeriodicRunner<number>({
    intervalMs,
    onError: (err) => errors.push(err),
    pass: async (cause) => {
      const n = ++passes;
      events.push(`pass ${n} began (${cause})`);
      await new Promise<void>((r) => releases.push(r));
      events.push(`pass ${n} ended`);
      return n;
    },
  });
  const began = async (n: number) => {
    for (let i = 0; i < 100 && releases.length < n; i++) await new Promise((r) => setImmediate(r));
    expect(releases.length, `pass ${n} began`).toBeGreaterThanOrEqual(n);
  };
  return { runner, events, errors, release: (n: number) => releases[n - 1]!(), began, passes: () => passes };
}

describe('PeriodicRunner', () => {
  afterEach(() => vi.useRealTimers());

  it('a pass running when stop is asked ends before stop resolves, and no pass follows it', async () => {
    const { runner, events, release, began, passes } = heldRunner();
    runner.start(0);
    await began(1);
    const stopped = runner.stop().then(() => events.push('stopped'));
    events.push('stop asked');
    expect(runner.state).toBe('Stopping');
    // Asked while stopping: nothing runs.
    expect(await runner.run()).toBeUndefined();
    await new Promise((r) => setImmediate(r));
    expect(events).toEqual(['pass 1 began (timer)', 'stop asked']);
    release(1);
    await stopped;
    expect(events).toEqual(['pass 1 began (timer)', 'stop asked', 'pass 1 ended', 'stopped']);
    expect(runner.state).toBe('Stopped');
    expect(passes()).toBe(1);
  });

  it('stop before start: no pass ever runs, a second stop is a no-op, and start makes it run again', async () => {
    const { runner, events, release, began } = heldRunner();
    await runner.stop();
    await runner.stop();
    expect(runner.state).toBe('Stopped');
    expect(await runner.run()).toBeUndefined();
    expect(events).toEqual([]);
    runner.start(0);
    await began(1);
    release(1);
    await vi.waitFor(() => expect(runner.state).toBe('Waiting'));
    expect(events).toEqual(['pass 1 began (timer)', 'pass 1 ended']);
    await runner.stop();
  });

  it('asks during a pass coalesce into one more pass, which every asker awaits', async () => {
    const { runner, events, release, began } = heldRunner();
    const first = runner.run();
    await began(1);
    const asks = [runner.run(), runner.run(), runner.run()];
    release(1);
    expect(await first).toBe(1);
    await began(2);
    release(2);
    expect(await Promise.all(asks)).toEqual([2, 2, 2]);
    expect(events).toEqual(['pass 1 began (asked)', 'pass 1 ended', 'pass 2 began (asked)', 'pass 2 ended']);
    // Never started: no timer follows.
    expect(runner.state).toBe('Idle');
  });

  it('a double stop during a pass waits for the same pass, and both resolve after it', async () => {
    const { runner, events, release, began } = heldRunner();
    void runner.run();
    await began(1);
    const a = runner.stop().then(() => events.push('first stop resolved'));
    const b = runner.stop().then(() => events.push('second stop resolved'));
    release(1);
    await Promise.all([a, b]);
    expect(events).toEqual(['pass 1 began (asked)', 'pass 1 ended', 'first stop resolved', 'second stop resolved']);
  });

  it('runs every interval after a pass ends, soon() moves the next pass earlier, and a failed timer pass is reported and retried', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const causes: string[] = [];
    const errors: unknown[] = [];
    let fail = true;
    const runner = new PeriodicRunner({
      intervalMs: 1_000,
      onError: (err) => errors.push(err),
      pass: async (cause) => {
        causes.push(cause);
        if (fail) throw new Error('storage out of reach');
      },
    });
    runner.start();
    await vi.advanceTimersByTimeAsync(999);
    expect(causes).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(causes).toEqual(['timer']);
    expect(errors.map(String)).toEqual(['Error: storage out of reach']);
    fail = false;
    runner.soon(50);
    await vi.advanceTimersByTimeAsync(50);
    expect(causes).toEqual(['timer', 'asked']);
    // soon() never moves a pass later: the timer due in 1000 ms stays.
    runner.soon(5_000);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(causes).toEqual(['timer', 'asked', 'timer']);
    await runner.stop();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(causes).toHaveLength(3);
  });

  it.each(['run', 'soon'] as const)('asks (%s) more often than the interval do not put the timer off: its pass still comes once an interval', async (how) => {
    // The notifier's timer pass is its sweep (the digest of expiring keys); its key watch asks for
    // a pass at each change. Changes every 100 ms must not stop the sweep that is due every second.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const causes: [number, string][] = [];
    const runner = new PeriodicRunner({ intervalMs: 1_000, onError: () => {}, pass: async (cause) => void causes.push([Date.now(), cause]) });
    const started = Date.now();
    runner.start();
    for (let t = 100; t <= 3_500; t += 100) {
      await vi.advanceTimersByTimeAsync(100);
      if (how === 'run') await runner.run();
      else runner.soon(10);
    }
    await runner.stop();
    const timerPasses = causes.filter(([, c]) => c === 'timer').map(([at]) => at - started);
    expect(timerPasses).toHaveLength(3);
    // Each within one ask's spacing of its due time (1 s after the timer pass before it).
    timerPasses.forEach((at, i) => expect(at - (i === 0 ? 0 : timerPasses[i - 1]!)).toBeLessThanOrEqual(1_100));
    expect(causes.filter(([, c]) => c === 'asked').length).toBeGreaterThan(20);
  });

  it('an interval decided after each pass (a backoff) holds after an asked pass too: a failed asked pass is retried after the backoff the interval gives, not at the old timer', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    let failures = 0;
    const at: number[] = [];
    const start = Date.now();
    const runner = new PeriodicRunner({
      // as the daemon: 1 s after a failure, else the interval (10 min)
      intervalMs: () => (failures > 0 ? 1_000 : 600_000),
      onError: () => {},
      pass: async () => {
        at.push(Date.now() - start);
        if (at.length === 2) {
          failures++;
          throw new Error('the cycle failed');
        }
        failures = 0;
      },
    });
    runner.start(0);
    await vi.advanceTimersByTimeAsync(10);
    await vi.advanceTimersByTimeAsync(60_000);
    await runner.run().catch(() => {}); // a webhook asks for a cycle; it fails
    await vi.advanceTimersByTimeAsync(5_000);
    await runner.stop();
    // A retry about 1 s after the failed cycle at 60 s (the daemon's backoff), not at the old timer.
    expect(at.length, JSON.stringify(at)).toBeGreaterThanOrEqual(3);
    expect(at[2]! - at[1]!).toBeLessThanOrEqual(2_000);
  });

  it('changes seen during a pass (soon) wait their gathering time after it, not the next pass at once; run() during a pass still runs it at once', async () => {
    // The sync daemon sees its own writes as changes: a pass asked for with soon() during its
    // cycle must gather for its time after the cycle, as before it, not start the next at once.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    const { runner, events, release, began } = heldRunner();
    runner.start(0);
    await began(1);
    runner.soon(300);
    runner.soon(500); // the earliest ask wins
    release(1);
    await vi.advanceTimersByTimeAsync(299);
    expect(events).toEqual(['pass 1 began (timer)', 'pass 1 ended']);
    await vi.advanceTimersByTimeAsync(1);
    await began(2);
    expect(events.at(-1)).toBe('pass 2 began (asked)');
    // Someone awaiting a pass during one: it runs as soon as the one in flight ends.
    runner.soon(300);
    const asked = runner.run();
    release(2);
    await began(3);
    expect(events.slice(-2)).toEqual(['pass 2 ended', 'pass 3 began (asked)']);
    release(3);
    expect(await asked).toBe(3);
    await runner.stop();
  });
});
