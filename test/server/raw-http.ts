/** Requests over loopback with node:http, bodies framed as given: for hostile and measured requests. */
import { request } from 'node:http';

export interface Answer {
  status: number;
  body: Buffer;
}

/** One request over loopback; a response still streaming after `cutMs` (a watch) is cut off and counts as answered. */
export function send(base: string, method: string, path: string, headers: Record<string, string>, body?: Buffer, cutMs = 1000): Promise<Answer> {
  return new Promise((resolve, reject) => {
    // Node frames a GET or DELETE body only when told its length.
    const framed = body ? { ...headers, 'Content-Length': String(body.length) } : headers;
    const req = request(`${base}${path}`, { method, headers: framed }, (res) => {
      const chunks: Buffer[] = [];
      const cut = setTimeout(() => res.destroy(), cutMs);
      res.on('data', (d: Buffer) => chunks.push(d));
      const done = () => {
        clearTimeout(cut);
        resolve({ status: res.statusCode!, body: Buffer.concat(chunks) });
      };
      res.on('end', done);
      res.on('close', done);
    });
    req.on('error', reject);
    req.end(body);
  });
}
