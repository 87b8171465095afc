/** The server's close and its background controllers (src/background/supervisor.ts, server/background/). */
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createRegistry } from '../../src/registry/registry.js';
import { createAuthContext } from '../../src/server/auth/auth-context.js';
import { buildServer } from '../../src/server/server.js';
import { MemoryStore } from '../../src/store/backends/memory.js';
import { eventually } from '../support/eventually.js';

interface LogLine {
  level: number;
  msg: string;
  controller?: string;
  work?: string[];
}

describe('closing a server whose background work does not stop', () => {
  it('a controller whose stop never returns holds the close only for the bound, and the warning names it', async () => {
    const lines: LogLine[] = [];
    const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l) as LogLine) });
    const registry = createRegistry(new MemoryStore());
    const auth = await createAuthContext(registry, logger);
    let started = false;
    // As the sidecar's sync daemon is handed to the server: work only the leader runs.
    const stuck = { name: 'stuck-sync', start: () => void (started = true), stop: () => new Promise<void>(() => {}) };
    const app = await buildServer({ registry, auth, logger, maintenance: false, stopBoundMs: 200, background: [stuck] });
    try {
      await app.listen({ host: '127.0.0.1', port: 0 });
      await eventually('the leader started its work', () => started);
      expect(lines.find((l) => l.msg === 'acquired the background-work lease')?.work).toContain('stuck-sync');
      // The test's own bound only catches a hang: the server's is 200 ms per controller.
      const outcome = await Promise.race([app.close().then(() => 'closed'), new Promise((r) => setTimeout(() => r('hung'), 20_000).unref())]);
      expect(outcome).toBe('closed');
      const warning = lines.find((l) => l.controller === 'stuck-sync');
      expect(warning).toMatchObject({ level: 40, msg: 'background controller "stuck-sync" did not stop within 200 ms; going on without waiting for it' });
      // The rest stopped in time: no other controller is named.
      expect(lines.filter((l) => l.controller !== undefined).map((l) => l.controller)).toEqual(['stuck-sync']);
      expect(app.background.states()).toEqual({ 'key-activity': 'stopped', leader: 'stopped', 'key-health': 'stopped' });
    } finally {
      await registry.store.close();
    }
  });

  it('a server closed before it was ever ready starts nothing and closes at once', async () => {
    const logger = pino({ level: 'silent' });
    const registry = createRegistry(new MemoryStore());
    const auth = await createAuthContext(registry, logger);
    let started = false;
    const app = await buildServer({ registry, auth, logger, maintenance: false, background: [{ name: 'sync', start: () => void (started = true), stop: () => {} }] });
    await app.close();
    expect(started).toBe(false);
    expect(app.background.states()).toEqual({ 'key-activity': 'stopped', leader: 'stopped', 'key-health': 'stopped' });
    await registry.store.close();
  });

  it('with `synced` (serve passes the watch cache fill), the lease and the key health sweep wait for it; closed before it, they never start', async () => {
    const lines: LogLine[] = [];
    const logger = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l) as LogLine) });
    const registry = createRegistry(new MemoryStore());
    const auth = await createAuthContext(registry, logger);
    let fill!: () => void;
    const synced = new Promise<void>((r) => (fill = r));
    let started = false;
    const app = await buildServer({ registry, auth, logger, maintenance: false, synced: () => synced, background: [{ name: 'sync', start: () => void (started = true), stop: () => {} }] });
    try {
      await app.listen({ host: '127.0.0.1', port: 0 });
      // Serving, but no lease taken and no sweep while the cache fills.
      const res = await fetch(`http://127.0.0.1:${(app.server.address() as { port: number }).port}/healthz`);
      expect(res.status).toBe(200);
      await new Promise((r) => setTimeout(r, 100));
      expect(started).toBe(false);
      expect(lines.some((l) => l.msg === 'acquired the background-work lease')).toBe(false);
      expect(app.keyHealthSweep!.lastSweepMs).toBe(0);
      fill();
      await eventually('the leader started its work once the fill was done', () => started);
      await eventually('the key health sweep ran', () => app.keyHealthSweep!.lastSweepMs > 0);
    } finally {
      await app.close();
    }

    // Closed while waiting: nothing starts after, when the fill ends.
    const late = createRegistry(new MemoryStore());
    let lateFill!: () => void;
    const lateSynced = new Promise<void>((r) => (lateFill = r));
    let lateStarted = false;
    const closedEarly = await buildServer({ registry: late, auth: await createAuthContext(late, logger), logger, maintenance: false, synced: () => lateSynced, background: [{ name: 'sync', start: () => void (lateStarted = true), stop: () => {} }] });
    await closedEarly.listen({ host: '127.0.0.1', port: 0 });
    await closedEarly.close();
    lateFill();
    await new Promise((r) => setTimeout(r, 100));
    expect(lateStarted).toBe(false);
    expect(closedEarly.keyHealthSweep!.lastSweepMs).toBe(0);
    await registry.store.close();
    await late.store.close();
  });
});
