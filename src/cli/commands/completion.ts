/** `teamkeys completion bash|zsh|fish`: the script, generated from this program's commands and flags. */
import type { Command, Option } from 'commander';
import { resourcesFor } from '../../api/resources.js';
import { CliError } from '../errors.js';

const shellNames = ['bash', 'zsh', 'fish'];

/** Words a flag's value may be, read from its help (`text, json, yaml or markdown`). */
function valuesOf(o: Option): string[] | undefined {
  if (o.argChoices) return o.argChoices;
  const help = o.description.replace(/\([^)]*\)/g, '').trim();
  return /^[a-z][\w-]*(, [a-z][\w-]*)* or [a-z][\w-]*$/.test(help) ? help.split(/, | or /) : undefined;
}

/** Words the command's first argument may be: resource names, shells; files otherwise. */
function argumentValues(cmd: Command): string[] | undefined {
  const first = cmd.registeredArguments[0]?.name();
  if (first === 'resource') return Object.values(resourcesFor()).flatMap((r) => [r.plural, r.singular, ...r.shortNames]);
  if (first === 'shell') return shellNames;
  return undefined;
}

export function registerCompletion(program: Command): void {
  program
    .command('completion')
    .description('print a shell completion script: eval "$(teamkeys completion bash)", or zsh, or fish')
    .argument('<shell>', shellNames.join(', '))
    .action(async (shell: string) => {
      const { shells } = await import('../completion-scripts.js');
      if (!(shell in shells)) throw new CliError(`unsupported shell "${shell}": choose ${shellNames.join(', ')}`);
      const commands = program.commands.map((c) => {
        const values = argumentValues(c);
        return {
          name: c.name(),
          description: c.description(),
          options: [
            ...c.options
              .filter((o) => !o.hidden)
              .map((o) => {
                const v = valuesOf(o);
                return { flags: [o.short, o.long].filter((x): x is string => !!x), description: o.description, takesValue: o.required || o.optional, ...(v ? { values: v } : {}) };
              }),
            // Commander adds --help to every command without listing it among the options.
            { flags: ['-h', '--help'], description: 'display help for the command', takesValue: false },
          ],
          ...(values ? { argumentValues: values } : {}),
        };
      });
      process.stdout.write(shells[shell as keyof typeof shells]({ program: program.name(), commands }));
    });
}
