/** Printing objects: a kubectl-like table, or YAML / JSON. */
import { stringify } from 'yaml';
import type { KubeObject } from '../api/types.js';
import { CliError } from './errors.js';

export type OutputFormat = 'table' | 'yaml' | 'json' | 'name';

export function parseOutputFormat(value: string | undefined): OutputFormat {
  const format = value ?? 'table';
  if (!['table', 'yaml', 'json', 'name'].includes(format)) {
    throw new CliError(`unable to match a printer suitable for the output format "${format}", allowed formats are: json,name,table,yaml`, 2);
  }
  return format as OutputFormat;
}

/** kubectl's short ages: 45s, 12m, 5h, 3d. */
export function age(created: string | null | undefined, now: Date): string {
  if (!created) return '<unknown>';
  const seconds = Math.max(0, Math.floor((now.getTime() - Date.parse(created)) / 1000));
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 48 * 3600) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86400)}d`;
}

function columns(obj: KubeObject): [string, string][] {
  const spec = (obj.spec ?? {}) as Record<string, unknown>;
  const list = (v: unknown) => (Array.isArray(v) && v.length > 0 ? v.join(',') : '<none>');
  if (obj.kind === 'Team') {
    return [
      ['DISPLAY NAME', String(spec.displayName ?? '')],
      ['USERS', list(spec.users)],
      ['GROUPS', list(spec.groups)],
    ];
  }
  const owner = spec.user ? `user:${String(spec.user)}` : spec.team ? `team:${String(spec.team)}` : `subject:${String(spec.subject ?? '')}`;
  return [
    ['DISPLAY NAME', String(spec.displayName ?? '')],
    ['OWNER', owner],
    ['DISABLED', String(spec.disabled === true)],
  ];
}

export function renderTable(objects: KubeObject[], now: Date): string {
  if (objects.length === 0) return 'No resources found.';
  const rows = objects.map((o) => [o.metadata.name ?? '', ...columns(o).map(([, v]) => v), age(o.metadata.creationTimestamp, now)]);
  const header = ['NAME', ...columns(objects[0]!).map(([h]) => h), 'AGE'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [header, ...rows].map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('   ').trimEnd()).join('\n');
}

export function render(objects: KubeObject[], format: OutputFormat, asList: boolean, now = new Date()): string {
  switch (format) {
    case 'table':
      return renderTable(objects, now);
    case 'name':
      return objects.map((o) => `${o.kind.toLowerCase()}/${o.metadata.name}`).join('\n');
    case 'json':
      return JSON.stringify(asList ? { apiVersion: 'v1', kind: 'List', items: objects } : objects[0], null, 2);
    case 'yaml':
      return stringify(asList ? { apiVersion: 'v1', kind: 'List', items: objects } : objects[0]).trimEnd();
  }
}
