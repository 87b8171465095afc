/** The review as markdown (for people), CSV (for spreadsheets) and JSON (for programs and --since). */
import type { ReviewDiff } from './diff.js';
import { rowsOf } from './diff.js';
import type { IdentityEntry, KeyEntry, ReviewDocument, Row } from './model.js';

export type ReviewFormat = 'markdown' | 'csv' | 'json';
export const reviewFormats: readonly ReviewFormat[] = ['markdown', 'csv', 'json'];

export function renderJson(doc: ReviewDocument, diff?: ReviewDiff): string {
  return `${JSON.stringify(diff ? { ...doc, since: diff } : doc, null, 2)}\n`;
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
export function renderCsv(doc: ReviewDocument, diff?: ReviewDiff): string {
  const head = ['identity', 'verb', 'object', 'path'];
  const cells = (r: Row) => [r.identity, r.verb, r.object, r.path];
  if (diff) {
    return csvLine(['change', ...head]) + [...diff.granted.map((r) => csvLine(['granted', ...cells(r)])), ...diff.revoked.map((r) => csvLine(['revoked', ...cells(r)]))].join('');
  }
  return csvLine(head) + rowsOf(doc).map((r) => csvLine(cells(r))).join('');
}

/** Markdown cell: pipes and line breaks would end the cell or the row. */
const md = (v: string) => v.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/[\r\n]+/g, ' ');

const days = (from: string | null, now: Date) => (from ? `${Math.max(0, Math.floor((now.getTime() - Date.parse(from)) / 86_400_000))}d` : '-');

function keyLine(k: KeyEntry, now: Date): string {
  const state = k.state === 'active' ? 'active' : `${k.state}${k.refusal ? ` (${k.refusal})` : ''}`;
  return `| ${md(k.name)} | ${md(k.type ?? '-')} | ${days(k.createdAt, now)} | ${k.valueSetAt ? days(k.valueSetAt, now) : '-'} | ${k.lastUsedAt ? `${md(k.lastUsedAt)} (${days(k.lastUsedAt, now)} ago)` : 'never'} | ${md(k.expiresAt ?? 'never')} | ${md(state)} | ${md(k.scope ?? '-')} | ${k.rights} |`;
}

function identitySection(i: IdentityEntry, now: Date): string[] {
  const lines = [`### ${md(i.id)}`, ''];
  if (i.memberOf.length > 0) lines.push(`Member of: ${i.memberOf.map((m) => `${md(m.team)} (${m.by.join(', ')})`).join('; ')}`, '');
  if (i.roles.length > 0) lines.push(`Cluster roles: ${i.roles.map(md).join(', ')}`, '');
  lines.push('| object | verbs | path |', '|---|---|---|');
  for (const g of i.grants) lines.push(`| ${md(g.object)} | ${g.verbs.join(', ')} | ${md(g.path)} |`);
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
      for (const r of rows) lines.push(`| ${change} | ${md(r.identity)} | ${r.verb} | ${md(r.object)} | ${md(r.path)} |`);
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

export function renderMarkdown(doc: ReviewDocument, diff?: ReviewDiff): string {
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
  for (const i of doc.identities) lines.push(...identitySection(i, now));
  return `${lines.join('\n')}`;
}

export function renderReview(doc: ReviewDocument, format: ReviewFormat, diff?: ReviewDiff): string {
  return format === 'json' ? renderJson(doc, diff) : format === 'csv' ? renderCsv(doc, diff) : renderMarkdown(doc, diff);
}
