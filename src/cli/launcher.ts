/**
 * `npx teamkeys ...` runs this CLI under `sh -c` (npm exec's way), and a SIGTERM sent to npx reaches
 * only that shell: npm passes it on, the shell (dash) dies of it without passing it further, and
 * this process would run on, re-parented, holding its port. So when npm exec launched it, the CLI
 * takes its parent's going as that SIGTERM: serve and watch stop as they do on one.
 */
const pollMs = 200;

export function stopWithNpmExec(): void {
  if (process.env.npm_lifecycle_event !== 'npx' || process.platform === 'win32') return;
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    process.kill(process.pid, 'SIGTERM');
  }, pollMs);
  timer.unref();
}
