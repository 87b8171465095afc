/**
 * YAML bodies are decoded in worker threads: the `yaml` package needs about a second per megabyte
 * even on linear input, and the body limit is 3 MiB, so decoding on the event loop would hold
 * every other request (health checks, watches) that long. Decoding cannot be jammed by one caller:
 * - each thread decodes one body at a time, and a caller has at most one body on a thread, so one
 *   caller's bodies never hold every thread (another caller's apply takes the next free one);
 * - a caller may have a few bodies waiting, the server a bounded number: beyond, 429 Retry-After;
 * - a body that runs the thread out of its heap, or past the time limit, ends that thread and fails
 *   only its own request (413); the next body starts a fresh thread.
 */
import { Worker } from 'node:worker_threads';
import { packageFile } from '../package-files.js';
import type { FastifyRequest } from 'fastify';
import { tooManyRequests } from '../api/errors.js';
import type { YamlResult } from './yaml-body.js';
import { clientOf } from './client-address.js';

export interface DecoderLimits {
  /** Threads decoding at once (the machines serving this have few cores; two lets a second caller through). */
  threads: number;
  /** Bodies one caller may have decoding or waiting. */
  perCaller: number;
  /** Bodies the server holds decoding or waiting, from all callers. */
  total: number;
  /** How long one body may take to decode. */
  timeoutMs: number;
  /** Each thread's old-generation heap, in MiB: the node bound (api/yaml-reader.ts) keeps a decode near 100 MiB. */
  heapMb: number;
}

export const defaultDecoderLimits: DecoderLimits = { threads: 2, perCaller: 4, total: 64, timeoutMs: 15_000, heapMb: 256 };

const outOfMemory: YamlResult = { error: 'the request body needs too much memory to decode', tooLarge: true };
const tooSlow = (ms: number): YamlResult => ({ error: `the request body takes longer than ${ms / 1000} seconds to decode`, tooLarge: true });

/** Built JavaScript beside this file, or, from the TypeScript source (tests), the source behind tsx's loader. */
function startWorker(heapMb: number): Worker {
  const resourceLimits = { maxOldGenerationSizeMb: heapMb };
  if (!import.meta.url.endsWith('.ts')) return new Worker(packageFile('dist/server/yaml-worker.js'), { resourceLimits });
  const tsx = import.meta.resolve('tsx/esm/api');
  const entry = new URL('./yaml-worker.ts', import.meta.url).href;
  const boot = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(boot, { eval: true, resourceLimits });
}

interface Job {
  text: string;
  caller: string;
  resolve(result: YamlResult): void;
}

/** One thread and the body it decodes; the thread is started on first use and again after it ends. */
interface Lane {
  worker?: Worker;
  job?: Job;
  timer?: NodeJS.Timeout;
}

export class YamlDecoder {
  private readonly lanes: Lane[];
  private readonly waiting: Job[] = [];
  /** Bodies per caller, decoding or waiting. */
  private readonly held = new Map<string, number>();
  private readonly limits: DecoderLimits;

  constructor(limits: Partial<DecoderLimits> = {}) {
    this.limits = { ...defaultDecoderLimits, ...limits };
    this.lanes = Array.from({ length: this.limits.threads }, () => ({}));
  }

  /** Decodes a body for `caller`; throws 429 when the caller or the server holds too many already. */
  decode(text: string, caller: string): Promise<YamlResult> {
    const mine = this.held.get(caller) ?? 0;
    let total = 0;
    for (const n of this.held.values()) total += n;
    if (mine >= this.limits.perCaller) throw tooManyRequests(`this client has ${mine} request bodies waiting to be decoded already; retry after 1 seconds`, 1);
    if (total >= this.limits.total) throw tooManyRequests('the server has too many request bodies waiting to be decoded; retry after 1 seconds', 1);
    this.held.set(caller, mine + 1);
    return new Promise((resolve) => {
      this.waiting.push({ text, caller, resolve });
      this.pump();
    });
  }

  /** Gives free threads the oldest bodies of callers who have none decoding. */
  private pump(): void {
    // Every thread is started with the first body, so a second caller never waits for one to boot.
    for (const lane of this.lanes) lane.worker ??= this.start(lane);
    for (const lane of this.lanes) {
      if (lane.job) continue;
      const busy = new Set(this.lanes.flatMap((l) => (l.job ? [l.job.caller] : [])));
      const next = this.waiting.findIndex((j) => !busy.has(j.caller));
      if (next < 0) return;
      this.run(lane, this.waiting.splice(next, 1)[0]!);
    }
  }

  private run(lane: Lane, job: Job): void {
    const worker = (lane.worker ??= this.start(lane));
    lane.job = job;
    // An idle thread does not keep the process alive; one with a body in flight does.
    worker.ref();
    lane.timer = setTimeout(() => this.end(lane, tooSlow(this.limits.timeoutMs)), this.limits.timeoutMs);
    worker.postMessage({ text: job.text });
  }

  /** The thread failed its body (out of heap, too slow): it is ended, the body refused, the next one gets a new thread. */
  private end(lane: Lane, result: YamlResult): void {
    const worker = lane.worker;
    lane.worker = undefined;
    void worker?.terminate();
    this.finish(lane, result);
  }

  private finish(lane: Lane, result: YamlResult): void {
    const job = lane.job;
    if (!job) return;
    clearTimeout(lane.timer);
    lane.job = undefined;
    lane.worker?.unref();
    const n = (this.held.get(job.caller) ?? 1) - 1;
    if (n > 0) this.held.set(job.caller, n);
    else this.held.delete(job.caller);
    job.resolve(result);
    this.pump();
  }

  private start(lane: Lane): Worker {
    const worker = startWorker(this.limits.heapMb);
    worker.unref();
    worker.on('message', ({ result }: { result: YamlResult }) => {
      if (lane.worker === worker) this.finish(lane, result);
    });
    // Out of heap (ERR_WORKER_OUT_OF_MEMORY) or any other end: only the body it held is refused.
    const down = () => {
      if (lane.worker === worker) this.end(lane, outOfMemory);
    };
    worker.on('error', down);
    worker.on('exit', down);
    return worker;
  }
}

const decoder = new YamlDecoder();

/** Who a body is queued for: the authenticated user, else the client's address. */
export const callerOf = (req: FastifyRequest): string => (req.identity ? `identity:${req.identity.name}` : `address:${clientOf(req)}`);

/** Decodes a YAML body off the event loop, in `caller`'s share of the threads. */
export const decodeYamlOffThread = (text: string, caller: string): Promise<YamlResult> => decoder.decode(text, caller);
