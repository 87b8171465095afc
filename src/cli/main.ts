#!/usr/bin/env node
/**
 * The teamkeys binary. `teamkeys credential` runs before every kubectl command, so it is dispatched
 * here without loading commander or any other command (src/cli/credential.ts); everything else is
 * the program in program.ts.
 */
if (process.argv[2] === 'credential') {
  const { runCredential } = await import('./credential.js');
  process.exitCode = await runCredential(process.argv.slice(3));
} else {
  const { stopWithNpmExec } = await import('./launcher.js');
  stopWithNpmExec();
  const { runProgram } = await import('./program.js');
  process.exitCode = await runProgram(process.argv);
}
