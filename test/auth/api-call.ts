/** A JSON call to the management API of a started `teamkeys serve`, as a key-holding client makes it. */
import type { Served } from '../server/serve-process.js';

export interface Reply<B = Record<string, unknown>> {
  status: number;
  body: B;
}

/** Calls `path` under the management API group with `token`; the body is sent as JSON of `type`. */
export function apiCaller<B>(served: () => Served) {
  return async (method: string, path: string, token: string, body?: unknown, type = 'application/json'): Promise<Reply<B>> => {
    const res = await fetch(`${served().url}/apis/management.service/v1${path}`, {
      method,
      headers: { Authorization: `Bearer ${token}`, ...(body !== undefined ? { 'Content-Type': type } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as B };
  };
}
