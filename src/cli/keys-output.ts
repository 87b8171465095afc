/**
 * `teamkeys keys` output: a table for people (coloured on a terminal), JSON for programs (the
 * documented shape of KeyRow, src/auth/key-listing.ts), Markdown for tickets and audit evidence
 * (every cell escaped: key names, display names and owners are user input). Table and Markdown
 * show control characters as \uXXXX (printable): an owner's name cannot drive the terminal.
 */
import { humanDuration } from '../api/printing.js';
import { ownerText, type KeyRow as ListedKey } from '../auth/key-listing.js';
import { printable } from '../api/printable.js';
import { mdText } from '../gitops/report/markdown-escape.js';
import { paint, type Colour } from './colour.js';
import { CliError } from './errors.js';

/** A key as `teamkeys keys` lists it: the listing's row, and when its scheduled rotation is next due (rotate-every). */
export type KeyRow = ListedKey & { nextRotationAt?: string | null };

export type KeysFormat = 'table' | 'json' | 'markdown';
const formats: KeysFormat[] = ['table', 'json', 'markdown'];

export function parseKeysFormat(value: string | undefined): KeysFormat {
  const format = value ?? 'table';
  if (!formats.includes(format as KeysFormat)) throw new CliError(`--output must be table, json or markdown, not "${format}"`);
  return format as KeysFormat;
}

/** Keys inside this window are flagged (yellow) in the table: the reports' default --warn-expiry. */
const soonSeconds = 14 * 86_400;

const ago = (s: number | null) => (s === null ? 'never' : `${humanDuration(s * 1000)} ago`);
const lastUse = (r: KeyRow) => (r.lastUsedAt === null ? 'never' : ago(r.unusedSeconds));
const expiry = (r: KeyRow) => {
  if (r.expiresInSeconds === null) return 'never';
  return r.expired ? `expired ${humanDuration(-r.expiresInSeconds * 1000)} ago` : `in ${humanDuration(r.expiresInSeconds * 1000)}`;
};
/** The rotation column: the state and the time that matters for it. */
export function rotationText(r: KeyRow): string {
  switch (r.rotation.state) {
    case 'none':
      return '—';
    case 'awaiting-delivery':
      return 'awaiting delivery';
    case 'overlap':
      return `overlap until ${r.rotation.previousValidUntil}`;
    case 'rotated':
      return `rotated ${r.rotation.rotatedAt ?? ''}`.trimEnd();
  }
}

const columns: { header: string; cell: (r: KeyRow) => string }[] = [
  { header: 'Name', cell: (r) => r.name },
  { header: 'Type', cell: (r) => r.type },
  { header: 'Owner', cell: (r) => ownerText(r.owner) },
  { header: 'Age', cell: (r) => (r.ageSeconds === null ? '<unknown>' : humanDuration(r.ageSeconds * 1000)) },
  { header: 'Last Use', cell: lastUse },
  { header: 'Expires', cell: expiry },
  { header: 'Disabled', cell: (r) => String(r.disabled) },
  { header: 'Scope', cell: (r) => r.scope },
  { header: 'Rotation', cell: rotationText },
  { header: 'Value Age', cell: (r) => (r.valueAgeSeconds === null ? '<unknown>' : humanDuration(r.valueAgeSeconds * 1000)) },
  { header: 'Next Rotation', cell: (r) => r.nextRotationAt ?? '—' },
];

/** Red: the key does not work (expired or disabled); yellow: it stops working within 14 days. */
function rowColour(r: KeyRow): Colour | undefined {
  if (r.expired || r.disabled) return 'red';
  if (r.expiresInSeconds !== null && r.expiresInSeconds <= soonSeconds) return 'yellow';
  return undefined;
}

export const noKeys = 'No access keys found.';

export function renderKeysTable(rows: KeyRow[], colour = false): string {
  if (rows.length === 0) return noKeys;
  const cells = rows.map((r) => columns.map((c) => printable(c.cell(r))));
  const header = columns.map((c) => c.header.toUpperCase());
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i]!)).join('   ').trimEnd();
  return [line(header), ...cells.map((c, i) => {
    const tint = rowColour(rows[i]!);
    return tint ? paint(line(c), tint, colour) : line(c);
  })].join('\n');
}

export function renderKeysMarkdown(rows: KeyRow[]): string {
  if (rows.length === 0) return noKeys;
  const row = (cells: string[]) => `| ${cells.join(' | ')} |`;
  return [row(columns.map((c) => c.header)), row(columns.map(() => '---')), ...rows.map((r) => row(columns.map((c) => mdText(printable(c.cell(r))) || ' ')))].join('\n');
}

export function renderKeys(rows: KeyRow[], format: KeysFormat, colour = false): string {
  if (format === 'json') return JSON.stringify(rows, null, 2);
  if (format === 'markdown') return renderKeysMarkdown(rows);
  return renderKeysTable(rows, colour);
}
