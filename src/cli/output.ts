/** Printing objects: a kubectl-like table, or YAML / JSON. */
import { stringify } from 'yaml';
import { columnsFor } from '../api/printing.js';
import type { KubeObject } from '../api/types.js';
import { CliError } from './errors.js';

export type OutputFormat = 'table' | 'wide' | 'yaml' | 'json' | 'name';

export function parseOutputFormat(value: string | undefined): OutputFormat {
  const format = value ?? 'table';
  if (!['table', 'wide', 'yaml', 'json', 'name'].includes(format)) {
    throw new CliError(`unable to match a printer suitable for the output format "${format}", allowed formats are: json,name,table,wide,yaml`);
  }
  return format as OutputFormat;
}

/** The same columns `kubectl get` shows, from the kind's printer columns. */
export function renderTable(objects: KubeObject[], now: Date, wide = false): string {
  if (objects.length === 0) return 'No resources found.';
  const columns = columnsFor(objects[0]!.kind).filter((c) => wide || c.priority === 0);
  const rows = objects.map((o) => columns.map((c) => String(c.cell(o, now) ?? '')));
  const header = columns.map((c) => c.name.toUpperCase());
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [header, ...rows].map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('   ').trimEnd()).join('\n');
}

export function render(objects: KubeObject[], format: OutputFormat, asList: boolean, now = new Date()): string {
  switch (format) {
    case 'table':
    case 'wide':
      return renderTable(objects, now, format === 'wide');
    case 'name':
      return objects.map((o) => `${o.kind.toLowerCase()}/${o.metadata.name}`).join('\n');
    case 'json':
      return JSON.stringify(asList ? { apiVersion: 'v1', kind: 'List', items: objects } : objects[0], null);
    case 'yaml':
      return stringify(asList ? { apiVersion: 'v1', kind: 'List', items: objects } : objects[0]).trimEnd();
  }
}
