// Preloaded into `teamkeys serve` by the lock.healthz figure (NODE_OPTIONS=--import=...): samples the
// main thread's event-loop delay and, on SIGUSR2, prints its percentiles to stderr and starts over.
import { isMainThread } from 'node:worker_threads';
import { monitorEventLoopDelay } from 'node:perf_hooks';

if (isMainThread && process.argv.includes('serve')) {
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  process.on('SIGUSR2', () => {
    const ms = (ns) => Number((ns / 1e6).toFixed(1));
    process.stderr.write(`loop-delay ${JSON.stringify({ p99: ms(h.percentile(99)), max: ms(h.max), mean: ms(h.mean) })}\n`);
    h.reset();
  });
}
