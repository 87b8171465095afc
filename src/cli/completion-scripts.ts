/**
 * Shell completion scripts generated from the command tree, as cobra generates kubectl's, flux's
 * and argocd's: static scripts, so a Tab press never starts node. Commander 14 has no completion of
 * its own; the maintained packages (tabtab, omelette) instead call the program back on every Tab,
 * which costs a node start per keypress and an install step in the user's shell profile.
 */

export interface CompletionOption {
  flags: string[];
  description: string;
  takesValue: boolean;
  /** The words a value may be; none: a file or free text. */
  values?: string[];
}

export interface CompletionCommand {
  name: string;
  description: string;
  options: CompletionOption[];
  /** Words the first positional argument may be; none: files. */
  argumentValues?: string[];
}

export interface CompletionTree {
  program: string;
  commands: CompletionCommand[];
}

const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();
const shellWord = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export function bashScript(t: CompletionTree): string {
  const fn = `_${t.program.replace(/\W/g, '_')}`;
  const cases = t.commands.map((c) => {
    const valued = c.options.filter((o) => o.takesValue);
    const free = valued.filter((o) => !o.values).flatMap((o) => o.flags);
    const valueCases = [
      ...valued.filter((o) => o.values).map((o) => `        ${o.flags.join('|')}) COMPREPLY=( $(compgen -W ${shellWord(o.values!.join(' '))} -- "$cur") ); return ;;`),
      ...(free.length ? [`        ${free.join('|')}) COMPREPLY=( $(compgen -f -- "$cur") ); return ;;`] : []),
    ];
    const flags = c.options.flatMap((o) => o.flags).join(' ');
    const positional = c.argumentValues ? `COMPREPLY=( $(compgen -W ${shellWord(c.argumentValues.join(' '))} -- "$cur") )` : 'COMPREPLY=( $(compgen -f -- "$cur") )';
    return [
      `    ${c.name})`,
      ...(valueCases.length ? ['      case "$prev" in', ...valueCases, '      esac'] : []),
      `      if [[ "$cur" == -* ]]; then COMPREPLY=( $(compgen -W ${shellWord(flags)} -- "$cur") ); else ${positional}; fi`,
      '      ;;',
    ].join('\n');
  });
  return `# bash completion for ${t.program}: eval "$(${t.program} completion bash)" in ~/.bashrc
${fn}() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}"
  if [[ $COMP_CWORD -eq 1 ]]; then
    COMPREPLY=( $(compgen -W ${shellWord(t.commands.map((c) => c.name).join(' '))} -- "$cur") )
    return
  fi
  case "\${COMP_WORDS[1]}" in
${cases.join('\n')}
  esac
}
complete -o default -F ${fn} ${t.program}
`;
}

/** zsh's _arguments spec text: no brackets or colons unescaped in descriptions. */
const zshText = (s: string) => oneLine(s).replace(/\\/g, '\\\\').replace(/[[\]]/g, (b) => (b === '[' ? '(' : ')')).replace(/:/g, '\\:').replace(/'/g, `'\\''`);

export function zshScript(t: CompletionTree): string {
  const fn = `_${t.program.replace(/\W/g, '_')}`;
  const cases = t.commands.map((c) => {
    const specs = c.options.map((o) => {
      const value = o.takesValue ? `:value:${o.values ? `(${o.values.join(' ')})` : '_files'}` : '';
      const spec = `[${zshText(o.description)}]${value}`;
      return o.flags.length > 1 ? `'(${o.flags.join(' ')})'{${o.flags.join(',')}}'${spec}'` : `'${o.flags[0]}${spec}'`;
    });
    const positional = c.argumentValues ? `'*:argument:(${c.argumentValues.join(' ')})'` : `'*:file:_files'`;
    return `    ${c.name})\n      _arguments ${[...specs, positional].join(' \\\n        ')}\n      ;;`;
  });
  const described = t.commands.map((c) => `    '${c.name}:${zshText(c.description)}'`).join('\n');
  return `#compdef ${t.program}
# zsh completion for ${t.program}: ${t.program} completion zsh > "\${fpath[1]}/_${t.program}", or source <(${t.program} completion zsh)
${fn}() {
  local -a commands
  commands=(
${described}
  )
  if (( CURRENT == 2 )); then
    _describe -t commands '${t.program} command' commands
    return
  fi
  local cmd=\${words[2]}
  shift words
  (( CURRENT-- ))
  case $cmd in
${cases.join('\n')}
  esac
}
compdef ${fn} ${t.program}
`;
}

export function fishScript(t: CompletionTree): string {
  const p = t.program;
  const lines = [`# fish completion for ${p}: ${p} completion fish > ~/.config/fish/completions/${p}.fish`, `complete -c ${p} -f`];
  for (const c of t.commands) lines.push(`complete -c ${p} -n __fish_use_subcommand -a ${c.name} -d ${shellWord(oneLine(c.description))}`);
  for (const c of t.commands) {
    const when = `-n ${shellWord(`__fish_seen_subcommand_from ${c.name}`)}`;
    lines.push(c.argumentValues ? `complete -c ${p} ${when} -a ${shellWord(c.argumentValues.join(' '))}` : `complete -c ${p} ${when} -F`);
    for (const o of c.options) {
      const names = o.flags.map((f) => (f.startsWith('--') ? `-l ${f.slice(2)}` : `-s ${f.slice(1)}`)).join(' ');
      const value = o.takesValue ? (o.values ? ` -x -a ${shellWord(o.values.join(' '))}` : ' -r -F') : '';
      lines.push(`complete -c ${p} ${when} ${names}${value} -d ${shellWord(oneLine(o.description))}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

export const shells = { bash: bashScript, zsh: zshScript, fish: fishScript } as const;
