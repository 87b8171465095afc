/** The teamkeys command line: the only place that parses flags, picks a store, and sets exit codes. */
import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { registerAccessReview } from './commands/access-review.js';
import { registerCompletion } from './commands/completion.js';
import { registerCreate } from './commands/create.js';
import { registerDelete } from './commands/delete.js';
import { registerDiff } from './commands/diff.js';
import { registerGet } from './commands/get.js';
import { registerGitops } from './commands/gitops.js';
import { registerImport } from './commands/import.js';
import { registerKeys } from './commands/keys.js';
import { registerLogin } from './commands/login.js';
import { registerRotate } from './commands/rotate.js';
import { registerScan } from './commands/scan.js';
import { registerRequest } from './commands/request.js';
import { registerServe } from './commands/serve.js';
import { registerSync } from './commands/sync.js';
import { registerVersion } from './commands/version.js';
import { registerWatch } from './commands/watch.js';
import { reportError } from './errors.js';
import { errorWriter } from './fatal-line.js';

const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };

export function buildProgram(): Command {
  const program = new Command()
    .name('teamkeys')
    .description('Team and access-key management as code: a Kubernetes-style management API and its GitOps reconciler.')
    .version(pkg.version)
    .exitOverride()
    // reportError prints commander's errors too, as one line; subcommands inherit this.
    .configureOutput({ outputError: () => {} });
  registerServe(program);
  registerGitops(program);
  registerDiff(program);
  registerWatch(program);
  registerSync(program);
  registerImport(program);
  registerCreate(program);
  registerGet(program);
  registerKeys(program);
  registerDelete(program);
  registerRotate(program);
  registerScan(program);
  registerRequest(program);
  registerLogin(program);
  registerAccessReview(program);
  registerVersion(program);
  registerCompletion(program);
  return program;
}

/** Runs the command line; resolves with the exit code. */
export async function runProgram(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv);
    // A command may set its own code (plan --detailed-exitcode gives 2).
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    return reportError(err, errorWriter());
  }
}
