/**
 * Preloaded into a `teamkeys serve` under test (node --import): reports every stretch in which the
 * server's event loop was held, as a line `loop-hold <wall ms> <cpu ms>` on stderr. A timer due
 * every 5 ms that fires late was kept waiting. On a shared machine a thread also waits for a CPU,
 * so the main thread's own CPU time over the stretch (from /proc, Linux) is reported beside the
 * wall time: that is the synchronous work that held the loop; elsewhere it is left out (-1).
 */
import { readFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

const tick = 5;
const reportOverMs = 20;
const statFile = `/proc/self/task/${process.pid}/stat`;
const ticksPerMs = 100 / 1000; // USER_HZ is 100 on Linux

/** The main thread's user + system CPU time in ms, or undefined where /proc is missing. */
function threadCpuMs() {
  try {
    const stat = readFileSync(statFile, 'latin1');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / ticksPerMs;
  } catch {
    return undefined;
  }
}

// Preloads run in worker threads too: only the main thread's loop serves requests.
if (isMainThread) {
  let last = performance.now();
  let lastCpu = threadCpuMs();
  setInterval(() => {
    const now = performance.now();
    const cpu = threadCpuMs();
    const held = now - last - tick;
    if (held > reportOverMs) {
      const cpuHeld = cpu === undefined || lastCpu === undefined ? -1 : cpu - lastCpu;
      process.stderr.write(`loop-hold ${Math.round(held)} ${Math.round(cpuHeld)}\n`);
    }
    last = now;
    lastCpu = cpu;
  }, tick).unref();
}
