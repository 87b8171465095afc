/** The supervisor of background controllers (src/background/supervisor.ts): states, order, and a bounded stop. */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { StartFailed, Supervisor, type Controller } from '../../src/background/supervisor.js';
import { eventually } from '../support/eventually.js';

interface LogLine {
  level: number;
  msg: string;
  controller?: string;
  waitedMs?: number;
  boundMs?: number;
}

function logged() {
  const lines: LogLine[] = [];
  return { lines, log: pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l) as LogLine) }) };
}

/** A controller recording its starts and stops in `events`; `hold` makes a start or stop wait for the returned release. */
function recording(events: string[]) {
  return (name: string, hold: { start?: Promise<void>; stop?: Promise<void> } = {}): Controller => ({
    name,
    start: async () => {
      events.push(`start ${name}`);
      await hold.start;
      events.push(`${name} started`);
    },
    stop: async () => {
      events.push(`stop ${name}`);
      await hold.stop;
      events.push(`${name} stopped`);
    },
  });
}

const never = new Promise<void>(() => {});

describe('Supervisor', () => {
  it('a controller whose stop never returns is named in a warning after the bound, and the others are still stopped', async () => {
    const events: string[] = [];
    const c = recording(events);
    const { lines, log } = logged();
    const s = new Supervisor([c('activity'), c('stuck-sync', { stop: never }), c('sweep')], log, { stopBoundMs: 100 });
    await s.start();
    // The test's own bound only catches a hang (the supervisor's is 100 ms).
    const outcome = await Promise.race([s.stop().then(() => 'stopped'), new Promise((r) => setTimeout(() => r('hung'), 20_000).unref())]);
    expect(outcome).toBe('stopped');
    expect(events).toEqual(['start activity', 'activity started', 'start stuck-sync', 'stuck-sync started', 'start sweep', 'sweep started', 'stop sweep', 'sweep stopped', 'stop stuck-sync', 'stop activity', 'activity stopped']);
    const warning = lines.find((l) => l.controller === 'stuck-sync');
    expect(warning).toMatchObject({ level: 40, boundMs: 100, msg: 'background controller "stuck-sync" did not stop within 100 ms; going on without waiting for it' });
    expect(warning!.waitedMs).toBeGreaterThanOrEqual(90);
    expect(lines.filter((l) => l.level >= 40)).toHaveLength(1);
    expect(s.states()).toEqual({ activity: 'stopped', 'stuck-sync': 'stopping', sweep: 'stopped' });
  });

  it('stop before start stops nothing and leaves every controller stopped; a second stop does nothing more', async () => {
    const events: string[] = [];
    const c = recording(events);
    const s = new Supervisor([c('a'), c('b')], pino({ level: 'silent' }));
    expect(s.states()).toEqual({ a: 'idle', b: 'idle' });
    await s.stop();
    await s.stop();
    expect(events).toEqual([]);
    expect(s.states()).toEqual({ a: 'stopped', b: 'stopped' });
  });

  it('a stop during a start waits for that start to end, stops it, and leaves the rest unstarted', async () => {
    const events: string[] = [];
    const c = recording(events);
    let release!: () => void;
    const s = new Supervisor([c('a', { start: new Promise((r) => (release = r)) }), c('b')], pino({ level: 'silent' }));
    const starting = s.start();
    await new Promise((r) => setImmediate(r));
    expect(s.states()).toEqual({ a: 'running', b: 'idle' });
    const stopping = s.stop().then(() => events.push('supervisor stopped'));
    await new Promise((r) => setImmediate(r));
    expect(s.states()).toEqual({ a: 'stopping', b: 'stopped' });
    release();
    await Promise.all([starting, stopping]);
    expect(events).toEqual(['start a', 'a started', 'stop a', 'a stopped', 'supervisor stopped']);
    expect(s.states()).toEqual({ a: 'stopped', b: 'stopped' });
  });

  it('a double stop stops each controller once, and start after stop (a lease won back) runs them again', async () => {
    const events: string[] = [];
    const c = recording(events);
    const s = new Supervisor([c('a'), c('b')], pino({ level: 'silent' }));
    await s.start();
    await Promise.all([s.stop(), s.stop()]);
    expect(events).toEqual(['start a', 'a started', 'start b', 'b started', 'stop b', 'b stopped', 'stop a', 'a stopped']);
    events.length = 0;
    await s.start();
    expect(events).toEqual(['start a', 'a started', 'start b', 'b started']);
    expect(s.states()).toEqual({ a: 'running', b: 'running' });
    await s.stop();
  });

  it('a controller still stopping when the work starts again holds back none after it, and starts itself once its stop ends', async () => {
    const events: string[] = [];
    const c = recording(events);
    let release!: () => void;
    const slowStop = new Promise<void>((r) => (release = r));
    const s = new Supervisor([c('activity'), c('stuck-sync', { stop: slowStop }), c('sweep')], pino({ level: 'silent' }), { stopBoundMs: 50 });
    await s.start();
    await s.stop();
    expect(s.states()).toEqual({ activity: 'stopped', 'stuck-sync': 'stopping', sweep: 'stopped' });
    events.length = 0;
    // The lease won back while the sync's stop is still under way: the others run at once.
    const starting = s.start();
    await eventually('the controllers after the straggler have started', () => s.states().sweep === 'running', 5_000);
    expect(s.states()).toEqual({ activity: 'running', 'stuck-sync': 'stopping', sweep: 'running' });
    expect(events).toEqual(['start activity', 'activity started', 'start sweep', 'sweep started']);
    // Never started twice at once: only once its stop has ended.
    release();
    await starting;
    expect(events).toEqual(['start activity', 'activity started', 'start sweep', 'sweep started', 'stuck-sync stopped', 'start stuck-sync', 'stuck-sync started']);
    expect(s.states()).toEqual({ activity: 'running', 'stuck-sync': 'running', sweep: 'running' });
    await s.stop();
  });

  it('a stop while a straggler is awaited leaves the straggler unstarted when its stop ends', async () => {
    const events: string[] = [];
    const c = recording(events);
    let release!: () => void;
    const slowStop = new Promise<void>((r) => (release = r));
    const s = new Supervisor([c('a'), c('slow', { stop: slowStop })], pino({ level: 'silent' }), { stopBoundMs: 50 });
    await s.start();
    await s.stop();
    const starting = s.start();
    // Once a's start has ended, the start waits on the straggler's stop alone.
    await eventually('a has started', () => events.at(-1) === 'a started', 5_000);
    await new Promise((r) => setTimeout(r, 10));
    await s.stop();
    release();
    await starting;
    await new Promise((r) => setTimeout(r, 20));
    expect(s.states()).toEqual({ a: 'stopped', slow: 'stopped' });
    expect(events.filter((e) => e === 'start slow')).toHaveLength(1);
  });

  it('a start that throws names its controller, and the stop that follows stops what had started', async () => {
    const events: string[] = [];
    const c = recording(events);
    const broken: Controller = { name: 'gc', start: () => Promise.reject(new Error('database out of reach')), stop: () => void events.push('stop gc') };
    const s = new Supervisor([c('a'), broken, c('b')], pino({ level: 'silent' }));
    const err = await s.start().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StartFailed);
    expect(err).toMatchObject({ controller: 'gc', message: 'background controller "gc" could not start' });
    await s.stop();
    expect(events).toEqual(['start a', 'a started', 'stop gc', 'stop a', 'a stopped']);
  });
});
