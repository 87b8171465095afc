/**
 * Text from manifests (names, values, file names, error messages that quote a field) and from the
 * server (who wrote what) reaches pull request comments: none of it may become Markdown or HTML.
 * A value that writes `<!-- teamkeys-plan ... -->` must not plant another source's comment marker,
 * one that writes `|`, a backtick or a newline must not leave its table cell or code span.
 * Plain text is written with HTML character references (which Markdown decodes as text, after it
 * has found the table's cells and the code spans); code spans hold JSON, whose `\u` escapes keep
 * every character and let none of `<`, `>`, `|`, `&` or a backtick appear, or a plain string
 * without its quotes when it holds none of those and cannot be read as another value (codeValue). Hidden characters (bidi,
 * zero-width, controls) and look-alike letters in a Latin word are shown as `\u` escapes in both.
 *
 * Report Markdown is built of `Md` values with the `md` template: literal text in the template is
 * the report's own markup, and every value put into it is escaped as text unless it is an `Md`
 * already, so a section cannot forget to escape what it quotes.
 */
import { visible } from './hidden-text.js';

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
  return visible(text).replace(/[&<>`|\\*[\]#~]|\r\n|[\r\n\u2028\u2029]/g, (c) => special[c] ?? ' ');
}

/** JSON text that is safe inside a code span and a table cell (the same JSON, other escapes). */
function jsonSafe(json: string): string {
  return visible(json).replace(/[<>|&`\r\n\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A value as a code span of its JSON: `"Platform"`, `["ana","bo"]`. */
function codeJson(value: unknown): Md {
  return new Md(`\`${jsonSafe(JSON.stringify(value) ?? 'null')}\``);
}

/**
 * A string that reads as itself in a code span without its JSON quotes: not empty, no spaces at
 * its ends, nothing the escaping has to rewrite (quotes, backslashes, `<>|&`, a backtick, controls,
 * hidden or look-alike characters), and not a text that would pass for another JSON value (a
 * number, true/false/null, an array or object).
 */
function bareString(text: string): boolean {
  if (text === '' || text !== text.trim() || visible(text) !== text) return false;
  if (/["\\<>|&`\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(text) || /^[[{]/.test(text)) return false;
  return !/^(true|false|null|NaN|[+-]?Infinity)$/.test(text) && Number.isNaN(Number(text));
}

/** A value as a code span: a plain string as written (`Platform`), anything else as its JSON (`""`, `"42"`, `["ana","bo"]`). */
export function codeValue(value: unknown): Md {
  return typeof value === 'string' && bareString(value) ? new Md(`\`${value}\``) : codeJson(value);
}

/** Names that read the same in a code span as written: shown bare; anything else as a quoted JSON string. */
const plain = /^[A-Za-z0-9._/:@+=,-]+$/;

/** A name or path (a file, a field path, an id) as a code span. */
export function codeText(text: string): Md {
  return plain.test(text) ? new Md(`\`${text}\``) : codeJson(text);
}

/** A backtick-quoted part of a description: its JSON shown as codeValue shows the value, or escaped as it is when it is not JSON. */
function codePart(json: string): Md {
  try {
    return codeValue(JSON.parse(json));
  } catch {
    return new Md(`\`${jsonSafe(json)}\``);
  }
}

/** Text made of running words and backtick-quoted JSON (a drift's description): each part escaped as what it is. */
export function mdWithCode(text: string): Md {
  return new Md(
    text
      .split('`')
      .map((part, i) => (i % 2 === 1 ? codePart(part).markup : mdText(part)))
      .join(''),
  );
}

/** Markdown the report wrote itself (or made of escaped parts): the only text put into a report as markup. */
export class Md {
  constructor(readonly markup: string) {}
  toString(): string {
    return this.markup;
  }
}

/** What a report section may put into its Markdown: its own markup, or text and numbers (escaped). */
export type MdPart = Md | string | number;

const asMarkup = (part: MdPart) => (part instanceof Md ? part.markup : typeof part === 'number' ? String(part) : mdText(part));

/** Markdown from a template: the template's literal text is markup, every value is escaped unless it is `Md`. */
export function md(strings: TemplateStringsArray, ...values: MdPart[]): Md {
  return new Md(strings.reduce((out, s, i) => out + s + (i < values.length ? asMarkup(values[i]!) : ''), ''));
}

/** Parts joined by a separator that is markup (`<br>`, `, `). */
export function mdJoin(parts: MdPart[], separator: string): Md {
  return new Md(parts.map(asMarkup).join(separator));
}

/** A table cell: a pipe or newline left in markup (a value's JSON is escaped already) would still end the cell. */
export function mdCell(part: MdPart): Md {
  return new Md(asMarkup(part).replace(/\|/g, '\\|').replace(/\n/g, ' '));
}
