/** A watch over real HTTP, read in the background: every event with the time it arrived. */
import { Agent, fetch as fetchWith } from 'undici';

export interface Arrived {
  type: string;
  object: { metadata?: { name?: string; uid?: string; resourceVersion?: string }; spec?: Record<string, unknown>; code?: number; reason?: string; message?: string };
  /** Date.now() when the line arrived. */
  at: number;
}

export interface Watching {
  status: number;
  /** The Retry-After header, if any. */
  retryAfter: string | null;
  /** The refusal's body when status is not 200. */
  body?: unknown;
  events: Arrived[];
  /** Date.now() when the server ended the stream; undefined while it is open. */
  endedAt: number | undefined;
  /** The first event `pick` accepts, waiting at most `ms` for it (undefined if none came). */
  next(pick: (e: Arrived) => boolean, ms?: number): Promise<Arrived | undefined>;
  /** Resolves when the server ends the stream, or after `ms` (then endedAt stays undefined). */
  ended(ms?: number): Promise<void>;
  close(): void;
}

/**
 * `ca`: the certificate(s) to trust for an https server with its own (the process's fetch trusts none).
 * `agent`: the test's own connections, which it destroys before closing the server (a kept-alive one would hold the close).
 */
export async function openWatch(url: string, key: string, opts: { ca?: Buffer | string; agent?: Agent } = {}): Promise<Watching> {
  const ac = new AbortController();
  const init = { headers: { Authorization: `Bearer ${key}` }, signal: ac.signal };
  const agent = opts.ca === undefined ? undefined : new Agent({ connect: { ca: opts.ca } });
  const dispatcher = agent ?? opts.agent;
  const res = dispatcher ? await fetchWith(url, { ...init, dispatcher }) : await fetch(url, init);
  const w: Watching = {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    events: [],
    endedAt: undefined,
    async next(pick, ms = 5000) {
      const deadline = Date.now() + ms;
      for (;;) {
        const found = w.events.find(pick);
        if (found || w.endedAt !== undefined || Date.now() > deadline) return found;
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async ended(ms = 5000) {
      const deadline = Date.now() + ms;
      while (w.endedAt === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    },
    close: () => {
      ac.abort();
      void agent?.destroy();
    },
  };
  if (res.status !== 200) {
    w.body = await res.json().catch(() => undefined);
    w.endedAt = Date.now();
    return w;
  }
  void (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let nl: number;
        while ((nl = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          if (line.trim()) w.events.push({ ...(JSON.parse(line) as Omit<Arrived, 'at'>), at: Date.now() });
        }
      }
    } catch {
      // aborted by close()
    }
    w.endedAt = Date.now();
  })();
  return w;
}
