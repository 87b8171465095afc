/** The report as Markdown: for pull request comments, job summaries and the daemon's latest run. */
import type { Report, ReportObject } from './report.js';
import { countsText, driftText, whoText as byText } from './who.js';

const code = (v: unknown) => `\`${JSON.stringify(v)?.replace(/`/g, "'") ?? 'null'}\``;
const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');

function headline(r: Report): string {
  const s = r.summary;
  const parts = countsText(r.mode, s, false);
  const title =
    r.outcome === 'invalid' ? 'invalid manifests' : r.outcome === 'refused' ? 'refused' : r.mode === 'validate' ? 'valid' : parts.length ? parts.join(', ') : 'no changes';
  const extra = [s.drifted ? `${s.drifted} drifted` : '', s.failed ? `${s.failed} failed` : ''].filter(Boolean).join(', ');
  return `## teamkeys ${r.mode}: ${title}${extra ? ` (${extra})` : ''}`;
}

function changeText(o: ReportObject): string {
  if (o.action === 'create') {
    // A reviewer approves what a new object grants: show its fields, not just that it is new.
    const spec = o.changes.find((c) => c.path === '')?.after;
    const fields = spec && typeof spec === 'object' ? Object.entries(spec).map(([k, v]) => `\`spec.${k}\`: ${code(v)}`) : [];
    return ['new object', ...fields].join('<br>');
  }
  if (o.action === 'delete') return o.reason ?? 'not in the source';
  if (o.action === 'skip' && o.changes.length === 0) return o.reason ?? '';
  return o.changes
    .map((c) => `${c.drift ? `**drift**: ${driftText(c)}<br>` : ''}\`${c.path}\`: ${c.before === undefined ? '(unset)' : code(c.before)} → ${c.after === undefined ? '(removed)' : code(c.after)}`)
    .join('<br>');
}

function whoText(o: ReportObject): string {
  const who = [...new Set(o.changes.map((c) => c.lastChangedBy).filter(Boolean).map((b) => byText(b)))];
  return who.join('<br>');
}

export function renderMarkdown(r: Report): string {
  const lines = [headline(r), ''];
  const target = r.mode === 'validate' ? '' : ` → \`${r.target}\``;
  lines.push(`Source \`${r.source.id}\`${r.source.revision ? ` at \`${r.source.revision.slice(0, 12)}\`` : ''}${target}`, '');
  if (r.refused) lines.push(`> **Refused:** ${r.refused}`, '');
  if (r.errors.length > 0) {
    lines.push('### Errors', '', ...r.errors.map((e) => `- \`${e.file}:${e.line}:${e.column}\`: ${e.message}`), '');
  }
  if (r.warnings?.length) {
    lines.push('### Warnings', '', ...r.warnings.map((w) => `- \`${w.file}:${w.line}:${w.column}\`: ${w.message}`), '');
  }
  // Drift left in place (report-only) belongs in the table too: it is what the report is for.
  const acted = r.objects.filter((o) => o.action !== 'skip' || o.drift);
  if (acted.length > 0) {
    lines.push('| Action | Object | Where | Change | Last changed by |', '|---|---|---|---|---|');
    for (const o of acted) {
      const action =
        o.action === 'skip' ? 'drift (reported, not reverted)' : `${o.action}${o.drift ? ' (drift)' : ''}${o.result && o.result !== 'Skipped' ? ` → ${o.result}` : ''}`;
      const where = o.file ? `\`${o.file}:${o.line}:${o.column}\`` : '';
      const change = o.error ? `${changeText(o)}<br>**${cell(o.error)}**` : changeText(o);
      lines.push(`| ${action} | ${o.kind}/${o.name} | ${where} | ${cell(change)} | ${cell(whoText(o))} |`);
    }
    lines.push('');
  }
  const notes = r.objects.flatMap((o) => [
    ...(o.keyFile ? [`key written to \`${o.keyFile}\``] : []),
    ...(o.keySecret ? [`key delivered to \`${o.keySecret}\``] : []),
    ...(o.note && !o.keyFile ? [o.note] : []),
  ].map((text) => `- ${o.kind}/${o.name}: ${text}`));
  if (notes.length > 0) lines.push(...notes, '');
  const skipped = r.objects.filter((o) => o.action === 'skip' && !o.drift);
  if (skipped.length > 0) {
    lines.push(`<details><summary>Skipped (${skipped.length})</summary>`, '', ...skipped.map((o) => `- ${o.kind}/${o.name}: ${o.reason ?? ''}`), '', '</details>', '');
  }
  if (r.mode !== 'validate') lines.push(`${r.summary.unchanged} unchanged.`);
  return `${lines.join('\n')}\n`;
}
