/** The review as markdown (for people), CSV (for spreadsheets) and JSON (for programs and --since). */
import type { ReviewDiff } from './diff.js';
import { rowsOf } from './diff.js';
import type { IdentityEntry, KeyEntry, ReviewDocument, Row } from './model.js';
import { printable } from '../api/printable.js';
import { codeValue, mdText } from '../gitops/report/markdown-escape.js';

export type ReviewFormat = 'markdown' | 'csv' | 'json';
export const reviewFormats: readonly ReviewFormat[] = ['markdown', 'csv', 'json'];

/**
 * The JSON form in pieces, identity by identity, byte for byte what JSON.stringify(doc, null, 2)
 * gives: 100,000 keys' review is tens of MB, and one string of it (built twice over by stringify)
 * would be the largest thing in memory.
 */
export function* jsonChunks(doc: ReviewDocument, diff?: ReviewDiff): Generator<string> {
  const { identities, ...head } = doc;
  const tail = diff ? { since: diff } : {};
  const indent = (text: string, by: string) => text.replace(/\n/g, `\n${by}`);
  const open = JSON.stringify(head, null, 2);
  yield `${open.slice(0, -2)},\n  "identities": [`;
  for (let n = 0; n < identities.length; n++) yield `${n === 0 ? '' : ','}\n    ${indent(JSON.stringify(identities[n], null, 2), '    ')}`;
  yield identities.length > 0 ? '\n  ]' : ']';
  const rest = JSON.stringify(tail, null, 2);
  yield rest === '{}' ? '\n}\n' : `,\n${rest.slice(2, -2)}\n}\n`;
}

export function renderJson(doc: ReviewDocument, diff?: ReviewDiff): string {
  return [...jsonChunks(doc, diff)].join('');
}

/**
 * One CSV cell (RFC 4180): quoted when it holds a comma, quote or line break; a cell a spreadsheet
 * would read as a formula (= + - @, and tab or carriage return before one) gets a leading `'`.
 */
export function csvCell(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

const csvLine = (cells: string[]) => `${cells.map(csvCell).join(',')}\r\n`;

/** Every row, one per (identity, verb, object, path); with a diff, only the changes, each with `change`. */
export function* csvChunks(doc: ReviewDocument, diff?: ReviewDiff): Generator<string> {
  const head = ['identity', 'verb', 'object', 'path'];
  const cells = (r: Row) => [r.identity, r.verb, r.object, r.path];
  if (diff) {
    yield csvLine(['change', ...head]);
    for (const r of diff.granted) yield csvLine(['granted', ...cells(r)]);
    for (const r of diff.revoked) yield csvLine(['revoked', ...cells(r)]);
    return;
  }
  yield csvLine(head);
  // Identity by identity, so that the rows of 100,000 keys are never all in memory at once.
  for (const i of doc.identities) yield rowsOf({ identities: [i] }).map((r) => csvLine(cells(r))).join('');
}

/**
 * Names are user input (a Team owner writes members and access rules): escaped as the reports
 * escape them (no `<!--`, `|`, line break or Markdown survives), control characters made visible.
 */
const md = (v: string) => mdText(printable(v));

/**
 * An object (`teams/*`, `ownedaccesskeys[team=payments]`) as a code span, which reads as written
 * both on the terminal (Markdown is the default there) and rendered: running text would need
 * `teams/&#42;`. One holding what a span or a cell cannot (a backtick, `|`, a control character)
 * or `<`, `>`, `&` is shown as its JSON string, those escaped (as the reports' code spans).
 */
/** A path's steps (joined by ` > ` in JSON and CSV) joined by an arrow, which needs no escaping as `>` would (`&gt;`). */
const mdPath = (path: string) => path.split(' > ').map(md).join(' → ');

const code = (v: string) => (/^[\x21-\x7e ]+$/.test(v) && !/[`|\\<>&]/.test(v) ? `\`${v}\`` : codeValue(v));

const days = (from: string | null, now: Date) => (from ? `${Math.max(0, Math.floor((now.getTime() - Date.parse(from)) / 86_400_000))}d` : '-');

function keyLine(k: KeyEntry, now: Date): string {
  const state = k.state === 'active' ? 'active' : `${k.state}${k.refusal ? ` (${k.refusal})` : ''}`;
  return `| ${md(k.name)} | ${md(k.type ?? '-')} | ${days(k.createdAt, now)} | ${k.valueSetAt ? days(k.valueSetAt, now) : '-'} | ${k.lastUsedAt ? `${md(k.lastUsedAt)} (${days(k.lastUsedAt, now)} ago)` : 'never'} | ${md(k.expiresAt ?? 'never')} | ${md(state)} | ${md(k.scope ?? '-')} | ${k.rights} |`;
}

function identitySection(i: IdentityEntry, now: Date): string[] {
  const lines = [`### ${md(i.id)}`, ''];
  if (i.memberOf.length > 0) lines.push(`Member of: ${i.memberOf.map((m) => `${md(m.team)} (${m.by.map(md).join(', ')})`).join('; ')}`, '');
  if (i.roles.length > 0) lines.push(`Cluster roles: ${i.roles.map(md).join(', ')}`, '');
  lines.push('| object | verbs | path |', '|---|---|---|');
  for (const g of i.grants) lines.push(`| ${code(g.object)} | ${g.verbs.join(', ')} | ${mdPath(g.path)} |`);
  lines.push('');
  if (i.keys.length > 0) {
    lines.push('| key | type | age | value age | last use | expires | state | scope | rights |', '|---|---|---|---|---|---|---|---|---|');
    for (const k of i.keys) lines.push(keyLine(k, now));
    lines.push('');
  }
  return lines;
}

function diffSection(diff: ReviewDiff): string[] {
  const lines = [`## Changes since the review of ${md(diff.previousGeneratedAt)}`, ''];
  lines.push(`${diff.granted.length} granted, ${diff.revoked.length} revoked, ${diff.keys.length} key changes.`, '');
  if (diff.granted.length + diff.revoked.length > 0) {
    lines.push('| change | identity | verb | object | path |', '|---|---|---|---|---|');
    for (const [change, rows] of [['granted', diff.granted], ['revoked', diff.revoked]] as const) {
      for (const r of rows) lines.push(`| ${change} | ${md(r.identity)} | ${r.verb} | ${code(r.object)} | ${mdPath(r.path)} |`);
    }
    lines.push('');
  }
  if (diff.keys.length > 0) {
    lines.push('| key | identity | change | before | after |', '|---|---|---|---|---|');
    const facts = (f: KeyEntry | undefined | Partial<KeyEntry>) => (f ? md(`${f.state}, rights ${f.rights}${f.scope ? `, scope ${f.scope}` : ''}${f.expiresAt ? `, expires ${f.expiresAt}` : ''}`) : '-');
    for (const k of diff.keys) lines.push(`| ${md(k.key)} | ${md(k.identity)} | ${k.change} | ${facts(k.before)} | ${facts(k.after)} |`);
    lines.push('');
  }
  return lines;
}

export function* markdownChunks(doc: ReviewDocument, diff?: ReviewDiff): Generator<string> {
  const now = new Date(doc.generatedAt);
  const lines = [
    '# Access review',
    '',
    `Generated ${doc.generatedAt} from ${md(doc.source)} (API group ${doc.group}): ${doc.counts.teams} Teams, ${doc.counts.keys} keys, ${doc.counts.identities} identities.`,
    '',
    'Each row: what an identity may do on an object and the path that grants it, as the server decides requests.',
    'Objects: `teams/*` every Team, `teams/NAME` one Team, `ownedaccesskeys/*` every key, `ownedaccesskeys[user=U]` the keys of user U, `ownedaccesskeys[team=T]` the keys of team T (`*`: of every team).',
    '',
    ...(diff ? diffSection(diff) : []),
    '## Identities',
    '',
  ];
  yield `${lines.join('\n')}\n`;
  for (const i of doc.identities) yield `${identitySection(i, now).join('\n')}\n`;
}

/** The pieces of a review in a format, to be written one after another. */
export function reviewChunks(doc: ReviewDocument, format: ReviewFormat, diff?: ReviewDiff): Iterable<string> {
  return format === 'json' ? jsonChunks(doc, diff) : format === 'csv' ? csvChunks(doc, diff) : markdownChunks(doc, diff);
}

export function renderReview(doc: ReviewDocument, format: ReviewFormat, diff?: ReviewDiff): string {
  return [...reviewChunks(doc, format, diff)].join('');
}
