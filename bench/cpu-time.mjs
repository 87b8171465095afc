// Preloaded into a measured process (node --import): the CPU seconds it used (user + system), on
// stderr at exit. On a shared machine CPU time measures the work; wall time measures the neighbours.
process.on('exit', () => {
  const u = process.resourceUsage();
  process.stderr.write(`\ncpu-seconds=${(u.userCPUTime + u.systemCPUTime) / 1e6}\n`);
});
