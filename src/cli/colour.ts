/**
 * Colour on a terminal, as kubectl, flux and git print it: only when the stream is a TTY, never
 * when NO_COLOR is set to anything (no-color.org) or TERM is dumb. Piped output and files stay plain.
 */
const codes = { red: 31, green: 32, yellow: 33, cyan: 36, bold: 1 } as const;
export type Colour = keyof typeof codes;

export function colourOn(stream: { isTTY?: boolean }): boolean {
  return stream.isTTY === true && !process.env.NO_COLOR && process.env.TERM !== 'dumb';
}

export function paint(text: string, colour: Colour, on: boolean): string {
  return on ? `\u001b[${codes[colour]}m${text}\u001b[0m` : text;
}

/** The colour of a line of a report or a diff: creations green, deletions and errors red, changes and warnings yellow. */
function lineColour(line: string): Colour | undefined {
  if (/^(\+\+\+|---) /.test(line)) return 'bold';
  if (line.startsWith('@@')) return 'cyan';
  if (line.startsWith('+')) return 'green';
  if (line.startsWith('-')) return 'red';
  if (/^[~±] /.test(line)) return 'yellow';
  if (/^\S+:\d+:\d+: warning: /.test(line)) return 'yellow';
  if (/^\S+:\d+:\d+: /.test(line) || /^(refused|error): /.test(line) || /^\s+(error|drift): /.test(line)) return 'red';
  return undefined;
}

/** Colours a text report or a unified diff line by line, when `on`. */
export function paintLines(text: string, on: boolean): string {
  if (!on) return text;
  return text
    .split('\n')
    .map((l) => {
      const c = lineColour(l);
      return c ? paint(l, c, true) : l;
    })
    .join('\n');
}
