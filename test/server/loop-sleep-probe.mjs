/**
 * Preloaded into a `teamkeys serve` under test (node --import): reports every stretch in which the
 * server's event loop was held, as `loop-sleep <wall ms> <sleep ms>` on stderr, where sleep is the
 * part of the stretch the main thread neither ran nor waited for a CPU: it was blocked in a system
 * call (SQLite's busy handler sleeping while another process holds the lock, a synchronous read).
 * From /proc/<pid>/task/<pid>/schedstat (time on CPU, time waiting on the run queue), so a busy
 * machine, which stretches wall time by making the thread wait for a CPU, does not count. Linux only.
 */
import { readFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

const tick = 5;
const reportOverMs = 20;
const statFile = `/proc/self/task/${process.pid}/schedstat`;

/** The main thread's time on a CPU plus its time waiting for one, in ms. */
function busyMs() {
  const [run, wait] = readFileSync(statFile, 'latin1').trim().split(' ').map(Number);
  return (run + wait) / 1e6;
}

if (isMainThread) {
  let last = performance.now();
  let lastBusy = busyMs();
  setInterval(() => {
    const now = performance.now();
    const busy = busyMs();
    const held = now - last - tick;
    if (held > reportOverMs) process.stderr.write(`loop-sleep ${Math.round(held)} ${Math.max(0, Math.round(now - last - (busy - lastBusy)))}\n`);
    last = now;
    lastBusy = busy;
  }, tick).unref();
}
