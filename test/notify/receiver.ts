/**
 * A real HTTP receiver on loopback for notification tests: records every request (path, headers,
 * raw body) and can go down (its port closed: connections refused) and come back on the same port.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface TestReceiver {
  url: string;
  received: Received[];
  /** The JSON bodies of the requests to `path`. */
  bodies(path?: string): Record<string, unknown>[];
  /** Answers nothing until the returned release is called (requests are recorded as they arrive). */
  hold(): () => void;
  /** Answers again (what a hold kept waiting included). */
  release(): void;
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<TestReceiver> {
  const received: Received[] = [];
  let server: Server | undefined;
  let port = 0;
  let gate: Promise<void> = Promise.resolve();
  let release = () => {};
  const listen = async () => {
    if (server) return;
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        void gate.then(() => res.writeHead(204).end());
      });
    });
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(port, '127.0.0.1', () => resolve());
    });
    port = (server!.address() as AddressInfo).port;
  };
  const stop = async () => {
    const s = server;
    server = undefined;
    if (!s) return;
    s.closeAllConnections();
    await new Promise<void>((resolve) => s.close(() => resolve()));
  };
  await listen();
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    bodies: (path) => received.filter((r) => path === undefined || r.path === path).map((r) => JSON.parse(r.body) as Record<string, unknown>),
    hold: () => {
      let open = () => {};
      gate = new Promise<void>((r) => (open = r));
      release = open;
      return open;
    },
    release: () => release(),
    down: stop,
    up: listen,
    close: stop,
  };
}
