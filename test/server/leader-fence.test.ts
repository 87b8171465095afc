/**
 * The fence the leader gives each work's writes (Leader.fenceOf, store/fence.ts): the hold that
 * last started that work, valid while the hold lasts (a close lets the writes under way finish),
 * refused, logged and counted once it ended, so work that outlived its stop never writes under a
 * later hold, while the work started before it runs under the new one.
 */
import pino from 'pino';
import { loggerOptions } from '../../src/cli/logging.js';
import { describe, expect, it } from 'vitest';
import { Leader, type LeaderEvents } from '../../src/server/background/leader.js';
import type { Lease } from '../../src/store/lease.js';
import { StorageError } from '../../src/store/errors.js';
import { eventually } from '../support/eventually.js';

/** A lease granted at each ask, with a token one higher each time; the test makes it lost. */
function handLease() {
  let token = 6;
  let held = false;
  let lost: (reason: string) => void = () => {};
  const asks: number[] = [];
  const lease: Lease = {
    tryAcquire: async () => {
      held = true;
      token++;
      asks.push(token);
      return true;
    },
    token: () => (held ? token : undefined),
    valid: () => held,
    onLost: (cb) => void (lost = cb),
    onRenewed: () => {},
    release: async () => void (held = false),
  };
  return { lease, asks, lose: () => ((held = false), lost('renewal refused')) };
}

/** Work whose stop ends only when the test says (a pass under way, past its bound). */
function stoppingWork() {
  let end!: () => void;
  let stops = 0;
  const work = {
    name: 'slow',
    start: () => {},
    stop: () => {
      stops++;
      return new Promise<void>((r) => (end = r));
    },
  };
  return { work, stops: () => stops, end: () => end() };
}

const until = (cond: () => boolean) => eventually('the leader got there', cond, { timeoutMs: 1_000, intervalMs: 5 });
const counting = () => {
  const counts = { refused: 0 };
  const events: LeaderEvents = { leading: () => {}, renewed: () => {}, lost: () => {}, refused: () => void counts.refused++ };
  return { counts, events };
};

describe('the fence of the leader’s work', () => {
  it('is refusing for work never started, logging and counting each refusal, and none for the sidecar’s then', () => {
    const { counts, events } = counting();
    const lines: { msg: string; object?: string }[] = [];
    const log = pino(loggerOptions('warn'), { write: (l: string) => void lines.push(JSON.parse(l) as { msg: string; object?: string }) });
    const leader = new Leader(handLease().lease, [], log, 10, events);
    expect(leader.fenceOf('slow')?.valid()).toBe(false);
    expect(leader.fenceOnceStarted('sync')).toBeUndefined();
    expect(leader.currentFence()?.valid()).toBe(false);
    leader.fenceOf('slow')!.refused(new StorageError('Fenced', '/teams/a', 'refused'));
    leader.currentFence()!.refused(new StorageError('Fenced', '/ownedaccesskeys/k', 'refused'));
    expect(counts.refused).toBe(2);
    expect(lines.map((l) => [l.object, l.msg])).toEqual([
      ['/teams/a', 'refused a background write: its work was never started under the background-work lease on this replica'],
      ['/ownedaccesskeys/k', 'refused a background write: its work was never started under the background-work lease on this replica'],
    ]);
  });

  it('stays the hold’s, and valid, while a close waits for the work to stop; refused and counted once the lease is released', async () => {
    const { lease } = handLease();
    const slow = stoppingWork();
    const { counts, events } = counting();
    const leader = new Leader(lease, [slow.work], pino({ level: 'silent' }), 10, events);
    leader.start();
    await until(() => leader.isLeader);
    expect(leader.fenceOf('slow')?.token).toBe(7);
    const closing = leader.stop();
    await until(() => slow.stops() === 1);
    // The pass under way writes its outcome (a refresh token the provider just rotated, a delivery mark).
    expect(leader.fenceOf('slow')).toMatchObject({ token: 7 });
    expect(leader.fenceOf('slow')!.valid()).toBe(true);
    slow.end();
    await closing;
    expect(leader.fenceOf('slow')!.valid()).toBe(false);
    leader.fenceOf('slow')!.refused(new StorageError('Fenced', '/k', 'refused'));
    expect(counts.refused).toBe(1);
  });

  it('after a lost hold: work still stopping writes under that hold, refused, while the works before and after it run under the next; it joins the next once stopped', async () => {
    const { lease, asks, lose } = handLease();
    const slow = stoppingWork();
    let quickStarts = 0;
    const quick = { name: 'quick', start: () => void quickStarts++, stop: () => {} };
    let afterStarts = 0;
    const after = { name: 'after', start: () => void afterStarts++, stop: () => {} };
    const leader = new Leader(lease, [quick, slow.work, after], pino({ level: 'silent' }), 10, undefined, 20);
    leader.start();
    await until(() => leader.isLeader);
    lose();
    await until(() => slow.stops() === 1);
    // Past the stop's bound (20 ms) the lease is taken again (hold 8) and `quick` and `after` run
    // under it: the straggler holds back neither...
    await until(() => asks.length === 2 && quickStarts === 2 && afterStarts === 2);
    expect(leader.isLeader).toBe(true);
    for (const name of ['quick', 'after']) {
      expect(leader.fenceOf(name)).toMatchObject({ token: 8 });
      expect(leader.fenceOf(name)!.valid()).toBe(true);
    }
    // ...while the pass of `slow` still under way writes under hold 7: refused.
    expect(leader.fenceOf('slow')).toMatchObject({ token: 7 });
    expect(leader.fenceOf('slow')!.valid()).toBe(false);
    slow.end();
    await until(() => leader.fenceOf('slow')?.token === 8);
    expect(leader.fenceOf('slow')!.valid()).toBe(true);
    await leader.stop();
  });
});
