/**
 * YAML bodies are decoded in a worker thread: the `yaml` package needs about a second per
 * megabyte even on linear input, and the body limit is 3 MiB, so decoding on the event loop would
 * hold every other request (health checks, watches) that long. The thread has a heap of its own
 * with a ceiling: a body that needs more than that to decode is refused (413), and the thread is
 * started again for the next one.
 */
import { Worker } from 'node:worker_threads';
import type { YamlResult } from './yaml-body.js';

/** The worker's old-generation heap, in MiB: a 3 MiB body of tiny nodes needs about a third of it. */
const heapMb = 512;

const overflow: YamlResult = { error: 'the request body needs too much memory to decode', tooLarge: true };

/** Built JavaScript beside this file, or, from the TypeScript source (tests), the source behind tsx's loader. */
function startWorker(): Worker {
  const resourceLimits = { maxOldGenerationSizeMb: heapMb };
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./yaml-worker.js', import.meta.url), { resourceLimits });
  const tsx = import.meta.resolve('tsx/esm/api');
  const entry = new URL('./yaml-worker.ts', import.meta.url).href;
  const boot = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(boot, { eval: true, resourceLimits });
}

/** One thread, started on first use, and the bodies waiting for it. */
class YamlThread {
  private worker: Worker | undefined;
  private readonly pending = new Map<number, (r: YamlResult) => void>();
  private nextId = 1;

  decode(text: string): Promise<YamlResult> {
    const worker = (this.worker ??= this.start());
    const id = this.nextId++;
    if (this.pending.size === 0) worker.ref();
    return new Promise((resolve) => {
      this.pending.set(id, resolve);
      worker.postMessage({ id, text });
    });
  }

  private start(): Worker {
    const worker = startWorker();
    // An idle thread does not keep the process alive; one with bodies in flight does.
    worker.unref();
    worker.on('message', ({ id, result }: { id: number; result: YamlResult }) => {
      this.pending.get(id)?.(result);
      this.pending.delete(id);
      if (this.pending.size === 0) worker.unref();
    });
    // Out of heap (ERR_WORKER_OUT_OF_MEMORY) or any other end: what it held is refused, the next body starts a new thread.
    const down = () => {
      if (this.worker !== worker) return;
      this.worker = undefined;
      for (const resolve of this.pending.values()) resolve(overflow);
      this.pending.clear();
    };
    worker.on('error', down);
    worker.on('exit', down);
    return worker;
  }
}

const thread = new YamlThread();

/** Decodes a YAML body off the event loop. */
export const decodeYamlOffThread = (text: string): Promise<YamlResult> => thread.decode(text);
