/**
 * Text from manifests (names, values, file names, error messages that quote a field) and from the
 * server (who wrote what) reaches pull request comments: none of it may become Markdown or HTML.
 * A value that writes `<!-- teamkeys-plan ... -->` must not plant another source's comment marker,
 * one that writes `|`, a backtick or a newline must not leave its table cell or code span.
 * Plain text is written with HTML character references (which Markdown decodes as text, after it
 * has found the table's cells and the code spans); code spans hold JSON, whose `\u` escapes keep
 * every character and let none of `<`, `>`, `|`, `&` or a backtick appear.
 */

/** Characters that mean something to Markdown or HTML in running text. */
const special: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '`': '&#96;',
  '|': '&#124;',
  '\\': '&#92;',
  '*': '&#42;',
  '[': '&#91;',
  ']': '&#93;',
  '#': '&#35;',
  '~': '&#126;',
};

/** Running text, shown as written: one line, nothing in it read as Markdown or HTML. */
export function mdText(text: string): string {
  return text.replace(/[&<>`|\\*[\]#~]|\r\n|[\r\n\u2028\u2029]/g, (c) => special[c] ?? ' ');
}

/** JSON text that is safe inside a code span and a table cell (the same JSON, other escapes). */
function jsonSafe(json: string): string {
  return json.replace(/[<>|&`\r\n\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A value as a code span of its JSON: `"Platform"`, `["ana","bo"]`. */
export function codeValue(value: unknown): string {
  return `\`${jsonSafe(JSON.stringify(value) ?? 'null')}\``;
}

/** Names that read the same in a code span as written: shown bare; anything else as a quoted JSON string. */
const plain = /^[A-Za-z0-9._/:@+=,-]+$/;

/** A name or path (a file, a field path, an id) as a code span. */
export function codeText(text: string): string {
  return plain.test(text) ? `\`${text}\`` : codeValue(text);
}

/** Text made of running words and backtick-quoted JSON (a drift's description): each part escaped as what it is. */
export function mdWithCode(text: string): string {
  return text
    .split('`')
    .map((part, i) => (i % 2 === 1 ? `\`${jsonSafe(part)}\`` : mdText(part)))
    .join('');
}
