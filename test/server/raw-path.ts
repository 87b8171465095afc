/** Requests whose request target is sent exactly as written (fetch and http.request(url) clean `..` and `//`). */
import { request } from 'node:http';

export interface RawAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

export interface RawRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: Buffer;
  /** A loopback address to send from (127.x.y.z), standing in for another machine. */
  from?: string;
  /** Send only this many bytes of the body, then wait for the answer without sending the rest. */
  sendOnly?: number;
}

/** One request to `base` (http://127.0.0.1:port) with the path sent byte for byte. */
export function rawRequest(base: string, path: string, opts: RawRequest = {}): Promise<RawAnswer> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const headers = { ...opts.headers, ...(opts.body ? { 'Content-Length': String(opts.body.length) } : {}) };
    const req = request({ host: url.hostname, port: url.port, method: opts.method ?? 'GET', path, headers, ...(opts.from ? { localAddress: opts.from } : {}) }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => {
        if (opts.sendOnly !== undefined) req.destroy();
        resolve({ status: res.statusCode!, headers: res.headers, body });
      });
    });
    // A server that answers before reading the body may close the connection while we still write.
    req.on('error', (err) => (opts.sendOnly !== undefined ? undefined : reject(err)));
    if (!opts.body) return void req.end();
    if (opts.sendOnly !== undefined) req.write(opts.body.subarray(0, opts.sendOnly));
    else req.end(opts.body);
  });
}

/** The Status message of an answer. */
export const messageOf = (a: RawAnswer): string => (JSON.parse(a.body) as { message: string }).message;
