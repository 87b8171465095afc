/**
 * Clients that stop reading a watch, over real HTTP (a raw socket that is paused: the kernel's
 * buffers fill, then the server's). Such a client must not keep its watch, its place among the
 * watch limits or an error loose in the server:
 * - its queue overflowing ends the watch with an ERROR event carrying a 410 Status, which it reads
 *   when it reads again, then the end of the stream (docs/api.md, docs/reliability.md);
 * - its watch's end (timeoutSeconds here) closes the connection within a bound even though nothing
 *   can be written, and gives its place back.
 */
import { connect, type Socket } from 'node:net';
import pino from 'pino';
import { Agent, fetch as fetchWith } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootstrapAdmin } from '../../src/auth/bootstrap.js';
import { createRegistry, type Registry } from '../../src/registry/registry.js';
import { createAuthContext } from '../../src/server/auth/auth-context.js';
import { apiPrefix, buildServer } from '../../src/server/server.js';
import type { WatchLimits } from '../../src/server/watch/watch-limits.js';
import { MemoryStore } from '../../src/store/backends/memory.js';
import { CachedStore } from '../../src/store/cache/cached-store.js';
import { adminKey, unusedAdminKeyFile } from './in-process.js';

interface LogLine {
  level: number;
  msg?: string;
  err?: { message?: string; type?: string };
}

interface Server {
  base: string;
  api: string;
  registry: Registry;
  logs: LogLine[];
  agent: Agent;
  close(): Promise<void>;
}

/** The in-process server (as in-process.ts) with the watch limits given and its log kept. */
async function start(watchLimits: Partial<WatchLimits>): Promise<Server> {
  const logs: LogLine[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void logs.push(JSON.parse(line) as LogLine) });
  const registry = createRegistry(new CachedStore(new MemoryStore()));
  await bootstrapAdmin(registry, { adminKey, keyFile: unusedAdminKeyFile });
  const auth = await createAuthContext(registry, logger);
  const app = await buildServer({ registry, auth, logger, maintenance: false, garbageCollector: false, watchLimits });
  // The test's own connections, closed before the server (a kept-alive one would hold its close).
  const agent = new Agent();
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  return {
    base,
    api: `${base}${apiPrefix}/apis/management.service/v1`,
    registry,
    logs,
    agent,
    close: async () => {
      await agent.destroy();
      await app.close();
      await registry.store.close();
    },
  };
}

interface RawWatch {
  /** The status line and headers, read before the socket was paused. */
  head: string;
  socket: Socket;
  /** Whether the server has closed the connection (only seen while reading). */
  closed: boolean;
  /** Whether the response's last chunk arrived (the server ended it; the connection may stay open). */
  complete: boolean;
  /** Reads again until the response is complete, the server closes the connection or `ms` pass; the body, dechunked. */
  readToEnd(ms: number): Promise<string>;
}

/** A watch over a raw socket that reads its response's head, then nothing (paused). */
function rawWatch(server: Server, path: string): Promise<RawWatch> {
  const url = new URL(server.base);
  const socket = connect(Number(url.port), url.hostname);
  const chunks: Buffer[] = [];
  const w: RawWatch = {
    head: '',
    socket,
    closed: false,
    complete: false,
    async readToEnd(ms) {
      const deadline = Date.now() + ms;
      socket.resume();
      const body = () => {
        const raw = Buffer.concat(chunks).toString('latin1');
        return raw.slice(raw.indexOf('\r\n\r\n') + 4);
      };
      while (!w.closed && Date.now() < deadline) {
        if (body().endsWith('\r\n0\r\n\r\n')) {
          w.complete = true;
          break;
        }
        await new Promise((r) => setTimeout(r, 20));
      }
      return dechunk(body());
    },
  };
  socket.on('data', (d: Buffer) => chunks.push(d));
  socket.on('close', () => (w.closed = true));
  socket.on('error', () => {});
  socket.write(`GET ${apiPrefix}/apis/management.service/v1/${path} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${adminKey}\r\n\r\n`);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no response head')), 10_000);
    const check = () => {
      const raw = Buffer.concat(chunks).toString('latin1');
      if (!raw.includes('\r\n\r\n')) return;
      socket.pause();
      socket.off('data', check);
      clearTimeout(timer);
      w.head = raw.slice(0, raw.indexOf('\r\n\r\n'));
      resolve(w);
    };
    socket.on('data', check);
  });
}

/** The body of a chunked response, as far as it arrived. */
function dechunk(body: string): string {
  let out = '';
  let at = 0;
  for (;;) {
    const eol = body.indexOf('\r\n', at);
    if (eol < 0) return out;
    const size = parseInt(body.slice(at, eol), 16);
    if (!(size > 0)) return out;
    out += body.slice(eol + 2, eol + 2 + size);
    at = eol + 2 + size + 2;
  }
}

/** `n` teams of about `bytes` each, straight through the registry (a hundred at a time). */
async function createTeams(registry: Registry, prefix: string, n: number, bytes: number): Promise<void> {
  const filler = 'x'.repeat(bytes);
  for (let i = 0; i < n; i += 100) {
    const batch: Promise<unknown>[] = [];
    for (let j = i; j < Math.min(n, i + 100); j++) batch.push(registry.teams.create({ metadata: { name: `${prefix}${j}`, annotations: { filler } } }));
    await Promise.all(batch);
  }
}

/** Opens a watch with fetch: its status, and a way to close it. */
async function fetchWatch(server: Server, query: string): Promise<{ status: number; close(): void }> {
  const ac = new AbortController();
  const res = await fetchWith(`${server.api}/teams?${query}`, { headers: { Authorization: `Bearer ${adminKey}` }, signal: ac.signal, dispatcher: server.agent });
  if (res.status !== 200) await res.body?.cancel();
  return { status: res.status, close: () => ac.abort() };
}

describe('a watch whose client stops reading while its queue overflows', () => {
  let server: Server;
  beforeAll(async () => {
    // A long grace: the client below reads again only once all the writes are made.
    server = await start({ endGraceMs: 20_000 } as Partial<WatchLimits>);
  });
  afterAll(() => server.close());

  /**
   * A watch that reads nothing while `write` runs, then reads to its end: it ends with an ERROR
   * event carrying a 410 Status, after a prefix of the Teams `prefix`0.. in order (fewer than `n`);
   * nothing is logged as an error. Its last event.
   */
  async function overflowed(prefix: string, n: number, write: () => Promise<void>) {
    const w = await rawWatch(server, `teams?watch=true&resourceVersion=${await server.registry.currentRevision()}`);
    expect(w.head).toMatch(/^HTTP\/1\.1 200/);
    await write();
    const body = await w.readToEnd(30_000);
    expect(w.complete).toBe(true);
    const lines = body.split('\n').filter((l) => l.trim());
    const events = lines.map((l) => JSON.parse(l) as { type: string; object: { code?: number; reason?: string; message?: string; metadata?: { name?: string } } });
    const last = events[events.length - 1]!;
    expect([last.type, last.object.code]).toEqual(['ERROR', 410]);
    // What came before it is a prefix of the changes, in order.
    const added = events.slice(0, -1);
    expect(added.every((e, i) => e.type === 'ADDED' && e.object.metadata?.name === `${prefix}${i}`)).toBe(true);
    expect(added.length).toBeLessThan(n);
    expect(server.logs.filter((l) => l.level >= 50)).toEqual([]);
    w.socket.destroy();
    return last;
  }

  it('ends with an ERROR event carrying a 410 Status after what was written, then the stream ends; nothing is logged as an error', async () => {
    // 2 KB events: a few MB fill the sockets' buffers, then the watch's queue of 10,000 overflows.
    const last = await overflowed('o', 13_000, () => createTeams(server.registry, 'o', 13_000, 2048));
    expect(last.object.message).toContain('watcher fell more than 10000 events behind');
    // The place was given back, and watches still work.
    const again = await fetchWatch(server, 'watch=true');
    expect(again.status).toBe(200);
    again.close();
  }, 120_000);

  it('ends with a 410 once 64 Mi characters of events waited over 5 s, long before 10,000 events (a review: 10,000 versions of a 3 MiB object)', async () => {
    // 200 KB events: 400 are 80 M characters, past the sockets' buffers and the bound; the
    // next write after the oldest waited 5 s is refused.
    const last = await overflowed('b', 410, async () => {
      await createTeams(server.registry, 'b', 400, 200_000);
      await new Promise((r) => setTimeout(r, 5_500));
      for (let i = 400; i < 410; i++) await server.registry.teams.create({ metadata: { name: `b${i}` } });
    });
    expect(last.object.message).toContain('watcher fell more than 67108864 characters of events behind for over 5 s');
    expect(server.logs.filter((l) => l.level === 40 && /characters of events behind for over 5 s; ending its watch with 410/.test(l.msg ?? ''))).toHaveLength(1);
  }, 120_000);
});

describe('a watch whose client reads while a burst heavier than the bound arrives', () => {
  let server: Server;
  beforeAll(async () => {
    server = await start({});
  });
  afterAll(() => server.close());

  it('takes every event, and the watch cache keeps following: weight alone cuts off no reader (the first bound of stop 66 did)', async () => {
    const filler = 'y'.repeat(250_000);
    await Promise.all(Array.from({ length: 480 }, (_, i) => server.registry.teams.create({ metadata: { name: `h${i}` } })));
    const from = await server.registry.currentRevision();
    // 480 updates at once, each event weighing its 250 KB: 120 M characters, more
    // than the replay window holds (32 Mi), so the watch below catches up from the log, a page (88 M)
    // handed over in one turn; and the watch cache followed them live.
    await Promise.all(Array.from({ length: 480 }, (_, i) => server.registry.teams.patch(`h${i}`, 'merge', { metadata: { annotations: { filler } } })));
    const res = await fetchWith(`${server.api}/teams?watch=true&resourceVersion=${from}`, { headers: { Authorization: `Bearer ${adminKey}` }, dispatcher: server.agent });
    expect(res.status).toBe(200);
    const names = new Set<string>();
    const decoder = new TextDecoder();
    let text = '';
    for await (const chunk of res.body!) {
      text += decoder.decode(chunk, { stream: true });
      let nl: number;
      while ((nl = text.indexOf('\n')) >= 0) {
        const e = JSON.parse(text.slice(0, nl)) as { type: string; object: { metadata?: { name?: string } } };
        text = text.slice(nl + 1);
        expect(e.type).toBe('MODIFIED');
        names.add(e.object.metadata!.name!);
      }
      if (names.size === 480) break;
    }
    expect(names.size).toBe(480);
    expect(server.logs.filter((l) => /watch cache|ending its watch/.test(l.msg ?? ''))).toEqual([]);
  }, 120_000);
});

describe('a watch whose client stops reading, at its end (timeoutSeconds)', () => {
  let server: Server;
  beforeAll(async () => {
    server = await start({ maxPerKey: 1, endGraceMs: 1000 } as Partial<WatchLimits>);
  });
  afterAll(() => server.close());

  it('closes the connection within a bound and gives its place back: the key can watch again', async () => {
    // The writes come first and the watch starts from before them, so its catch-up has them all at
    // once: on a loaded machine, writes made while the watch runs could take longer than its
    // timeout, and a watch that ends with nothing sent ends cleanly, which is not this case.
    const before = await server.registry.currentRevision();
    // Enough to fill the sockets' buffers, not the queue: the server waits for the client to drain.
    await createTeams(server.registry, 't', 4000, 2048);
    const w = await rawWatch(server, `teams?watch=true&resourceVersion=${before}&timeoutSeconds=4`);
    expect(w.head).toMatch(/^HTTP\/1\.1 200/);
    const refused = await fetchWatch(server, 'watch=true');
    expect(refused.status).toBe(429); // the non-reading watch holds the key's one place

    // timeoutSeconds=4, then at most the grace (1 s) to hand over what is written: a quiet machine
    // gives the place back after about 5 s; the bound is 30 s.
    const deadline = Date.now() + 30_000;
    let status = 0;
    while (Date.now() < deadline) {
      const res = await fetchWatch(server, 'watch=true');
      status = res.status;
      res.close();
      if (status === 200) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(status).toBe(200);
    // The connection was closed by the server (what was buffered can still be read, then the close).
    await w.readToEnd(5000);
    expect(w.closed).toBe(true);
    expect(server.logs.filter((l) => l.level >= 50)).toEqual([]);
    expect(server.logs.some((l) => l.level === 40 && /watch/i.test(l.msg ?? ''))).toBe(true);
    w.socket.destroy();
  }, 120_000);
});
