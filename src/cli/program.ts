/** The teamkeys command line: the only place that parses flags, picks a store, and sets exit codes. */
import { Command } from 'commander';
import { reportError } from './errors.js';
import { errorWriter } from './fatal-line.js';
import { packageVersion } from '../package-files.js';

type Register = (program: Command) => void;

/**
 * Each command module, the commands it registers, in help's order. A run that names one of them
 * loads that module alone: loading every command's imports (the server's defaults for serve's
 * flags, the sign-in's, ...) was about a sixth of a `teamkeys validate`'s start. Help, completion,
 * a flag first or an unknown name (for commander's "did you mean") get them all.
 */
const modules: [names: readonly string[], load: () => Promise<Register>][] = [
  [['serve'], async () => (await import('./commands/serve.js')).registerServe],
  [['validate', 'plan', 'apply'], async () => (await import('./commands/gitops.js')).registerGitops],
  [['diff'], async () => (await import('./commands/diff.js')).registerDiff],
  [['watch'], async () => (await import('./commands/watch.js')).registerWatch],
  [['sync'], async () => (await import('./commands/sync.js')).registerSync],
  [['import'], async () => (await import('./commands/import.js')).registerImport],
  [['create'], async () => (await import('./commands/create.js')).registerCreate],
  [['get'], async () => (await import('./commands/get.js')).registerGet],
  [['keys'], async () => (await import('./commands/keys.js')).registerKeys],
  [['delete'], async () => (await import('./commands/delete.js')).registerDelete],
  [['rotate'], async () => (await import('./commands/rotate.js')).registerRotate],
  [['scan'], async () => (await import('./commands/scan.js')).registerScan],
  [['request', 'approve', 'deny'], async () => (await import('./commands/request.js')).registerRequest],
  [['login', 'logout', 'credential'], async () => (await import('./commands/login.js')).registerLogin],
  [['access-review'], async () => (await import('./commands/access-review.js')).registerAccessReview],
  [['version'], async () => (await import('./commands/version.js')).registerVersion],
  [['completion'], async () => (await import('./commands/completion.js')).registerCompletion],
];

/** The commands a run names: those of the module registering `name`, else every command. */
export function modulesFor(name: string | undefined): typeof modules {
  const one = modules.find(([names]) => name !== undefined && name !== 'completion' && names.includes(name));
  return one ? [one] : modules;
}

/** The program, with the commands of the module that registers `name` (every command without one). */
export async function buildProgram(name?: string): Promise<Command> {
  const program = new Command()
    .name('teamkeys')
    .description('Team and access-key management as code: a Kubernetes-style management API and its GitOps reconciler.')
    .version(packageVersion())
    .exitOverride()
    // reportError prints commander's errors too, as one line; subcommands inherit this.
    .configureOutput({ outputError: () => {} });
  const registers = await Promise.all(modulesFor(name).map(([, load]) => load()));
  for (const register of registers) register(program);
  return program;
}

/** Runs the command line; resolves with the exit code. */
export async function runProgram(argv: string[]): Promise<number> {
  try {
    await (await buildProgram(argv[2])).parseAsync(argv);
    // A command may set its own code (plan --detailed-exitcode gives 2).
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    return reportError(err, errorWriter());
  }
}
