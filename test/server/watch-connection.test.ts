/**
 * WatchConnection's one rule: the first reason given to `end` is the one the client sees. Each
 * test gives two or more reasons in a known order and reads the stream as a client does: the last
 * line (the Status of the first reason, or none) and the end of the stream. The connection is the
 * real one, with the real watch hub (places, key keeper); its source is scripted so the test
 * decides when it overflows, and the key's re-authentication answers as the test says.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, gone, internalError, type Status } from '../../src/api/errors.js';
import type { Identity } from '../../src/auth/identity.js';
import type { AuthContext } from '../../src/server/auth/guard.js';
import { WatchConnection, type EndReason, type WatchEventOut, type WatchSource } from '../../src/server/watch/watch-connection.js';
import { WatchHub } from '../../src/server/watch/watch-hub.js';
import { StorageError } from '../../src/store/errors.js';
import { WatchQueue } from '../../src/store/watch-queue.js';
import { openWatch, type Watching } from './watch-client.js';

const overflowMessage = 'the watch fell too far behind and was closed: watcher fell more than 10000 events behind';
const overflowStatus = gone(overflowMessage).toStatus();
const keyRefused = new ApiError(401, 'Unauthorized', 'access key "alice-key" was disabled');
const who: Identity = { name: 'alice', user: 'alice', groups: [], teams: [], clusterRoles: new Set(), keyName: 'alice-key' };

/** A source the test drives: events it pushes, an overflow when it says, as the registry watch reports one. */
class ScriptedSource implements WatchSource {
  private readonly queue = new WatchQueue<WatchEventOut>(100);
  readonly started = Promise.resolve();
  private onOverflow: (status: Status) => void = () => {};
  /** Whether the iteration fails as it is stopped (a store closing under it) instead of ending quietly. */
  failOnStop = false;

  push(event: WatchEventOut): void {
    this.queue.push(event);
  }

  whenOverflowed(end: (status: Status) => void): void {
    this.onOverflow = end;
  }

  /** As the registry watch's send: the queue fails (its iteration throws after what it holds), and the overflow is said at once. */
  overflow(): void {
    this.queue.fail(new StorageError('WatchOverflow', '', 'watcher fell more than 10000 events behind'));
    this.onOverflow(overflowStatus);
  }

  stop(): void {
    if (this.failOnStop) this.queue.fail(new Error('the store closed under the watch'));
    else this.queue.end();
  }

  [Symbol.asyncIterator](): AsyncIterator<WatchEventOut> {
    return this.queue[Symbol.asyncIterator]();
  }
}

interface Served {
  source: ScriptedSource;
  connection: WatchConnection;
}

describe('WatchConnection: the first reason to end a watch is the one its client sees', () => {
  let app: FastifyInstance;
  let hub: WatchHub;
  let url: string;
  /** What the key's next re-authentication answers: its refusal, or (undefined) still valid. */
  let refusal: ApiError | undefined;
  const served: Served[] = [];
  const open: Watching[] = [];

  beforeAll(async () => {
    const auth = {
      authenticator: {
        reauthenticate: async () => {
          if (refusal) throw refusal;
          return { identity: who, revision: Number.MAX_SAFE_INTEGER };
        },
      },
    } as unknown as AuthContext;
    // One place per key: every test's watch must have given its place back for the next to open.
    hub = new WatchHub(auth, { maxPerKey: 1 });
    app = Fastify();
    // A refusal before the stream (429) is answered as the server's error handler answers an ApiError.
    app.setErrorHandler((err, _req, reply) => (err instanceof ApiError ? reply.code(err.code).send(err.toStatus()) : reply.send(err)));
    app.addHook('onRequest', async (req) => {
      req.identity = who;
    });
    app.get('/watch', async (req, reply) => {
      const source = new ScriptedSource();
      const connection = new WatchConnection(req, reply, hub, {
        resource: undefined,
        timeoutSeconds: undefined,
        open: () => source,
        encode: (event) => `${JSON.stringify(event)}\n`,
        // Distinct from every other Status here, so a failure that came last and won would show.
        apiError: (err) => internalError(`the source failed: ${(err as Error).message}`),
      });
      served.push({ source, connection });
      await connection.serve();
    });
    url = `${await app.listen({ host: '127.0.0.1', port: 0 })}/watch`;
  });

  afterAll(async () => {
    for (const w of open) w.close();
    await app?.close();
  });

  /** Opens a watch as a client and waits until it streams, with one event through it. */
  async function watching(): Promise<Served & { client: Watching }> {
    refusal = undefined;
    const client = await openWatch(url, 'alice-key-value');
    open.push(client);
    expect(client.status).toBe(200);
    const s = served[served.length - 1]!;
    s.source.push({ type: 'ADDED', object: { apiVersion: 'v1', kind: 'Team', metadata: { name: 'a', resourceVersion: '5' } } });
    expect(await client.next((e) => e.type === 'ADDED')).toBeDefined();
    return { ...s, client };
  }

  /** The lines after the first event, once the server has ended the stream. */
  async function rest(client: Watching): Promise<{ type: string; object: unknown }[]> {
    await client.ended();
    expect(client.endedAt, 'the server ends the stream').toBeDefined();
    return client.events.slice(1).map(({ type, object }) => ({ type, object }));
  }

  const statusLine = (status: Status) => ({ type: 'ERROR', object: expect.objectContaining({ kind: 'Status', code: status.code, reason: status.reason, message: status.message }) });

  it('an overflow, then shutdown in the same tick: the client gets the overflow\'s 410 Gone as its last line', async () => {
    const { source, client } = await watching();
    source.overflow();
    hub.endAll();
    expect(await rest(client)).toEqual([statusLine(overflowStatus)]);
  });

  it('shutdown, then an overflow in the same tick: the stream ends with no Status, and the client reconnects', async () => {
    const { source, client } = await watching();
    // Its iteration fails as it is stopped: a third reason, which comes after the first too.
    source.failOnStop = true;
    hub.endAll();
    source.overflow();
    expect(await rest(client)).toEqual([]);
  });

  it('an overflow, then the watch\'s time running out: the overflow\'s Status, not a quiet end', async () => {
    const { source, connection, client } = await watching();
    source.overflow();
    // What the timer calls when watchDurationMs has passed.
    connection.end({ why: 'timeout' });
    expect(await rest(client)).toEqual([statusLine(overflowStatus)]);
  });

  it('the watch\'s time, then its key refused: a quiet end, without the 401 that came second', async () => {
    const { source, connection, client } = await watching();
    // A source failing as it is stopped gives a third reason: it, too, comes after the first.
    source.failOnStop = true;
    connection.end({ why: 'timeout' });
    connection.end({ why: 'key-refused', status: keyRefused.toStatus() });
    expect(await rest(client)).toEqual([]);
  });

  it('a refused re-authentication ends the stream with its 401 Status and message', async () => {
    const { client } = await watching();
    // The keeper checks every open watch's key every 500 ms, whether or not it sends.
    refusal = keyRefused;
    expect(await rest(client)).toEqual([statusLine(keyRefused.toStatus())]);
  });

  it('an end after the end changes nothing: one Status line, the first, and the place given back once', async () => {
    const { source, connection, client } = await watching();
    refusal = keyRefused;
    await client.next((e) => e.type === 'ERROR');
    const later: EndReason[] = [{ why: 'overflow', status: overflowStatus }, { why: 'failed', status: overflowStatus }, { why: 'shutdown' }, { why: 'timeout' }];
    for (const reason of later) connection.end(reason);
    source.overflow();
    hub.endAll();
    expect(await rest(client)).toEqual([statusLine(keyRefused.toStatus())]);
    // The key's one place is free again, and only one: a second watch beside the next is refused.
    const next = await watching();
    const third = await openWatch(url, 'alice-key-value');
    open.push(third);
    expect(third.status).toBe(429);
    next.connection.end({ why: 'shutdown' });
    expect(await rest(next.client)).toEqual([]);
  });
});
