// Preloaded into a measured process (node --import): its peak resident memory, on stderr at exit.
process.on('exit', () => process.stderr.write(`\nmaxrss-kib=${process.resourceUsage().maxRSS}\n`));
