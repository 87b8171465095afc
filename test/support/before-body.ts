/** Whether a route answers before reading a body: a raw request that announces a large body and never sends it. */
import { connect } from 'node:net';

/** The status line the server answers with while the announced body is withheld, or 'no answer' within `ms`. */
export function statusBeforeBody(base: string, path: string, method: string, headers: Record<string, string>, ms = 3000): Promise<string> {
  const url = new URL(`${base}${path}`);
  return new Promise((resolve) => {
    const socket = connect(Number(url.port), url.hostname);
    const timer = setTimeout(() => (socket.destroy(), resolve('no answer')), ms);
    socket.once('data', (d: Buffer) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(d.toString().split('\r\n')[0]!);
    });
    const lines = Object.entries({ 'Content-Type': 'application/json', ...headers }).map(([k, v]) => `${k}: ${v}\r\n`).join('');
    socket.write(`${method} ${url.pathname} HTTP/1.1\r\nHost: x\r\n${lines}Content-Length: 2000000\r\n\r\n`);
  });
}
