/** The report as Markdown: for pull request comments, job summaries and the daemon's latest run. */
import { codeText, codeValue as code, mdText, mdWithCode } from './markdown-escape.js';
import { keyHealthMarkdown } from './key-health.js';
import type { Report, ReportObject } from './report.js';
import { attributionUnavailableText, countsText, rotationText, whoText as byText, withheldText } from './who.js';

/** A table cell: what went in is escaped already; a pipe or newline left would still end the cell. */
const cell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const drift = (c: ReportObject['changes'][number]) => `${mdWithCode(c.description ?? `changed ${c.path}`)}: ${mdText(byText(c.lastChangedBy))}`;

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
    const fields = spec && typeof spec === 'object' ? Object.entries(spec).map(([k, v]) => `${codeText(`spec.${k}`)}: ${code(v)}`) : [];
    return ['new object', ...fields].join('<br>');
  }
  if (o.action === 'delete') return mdText(o.reason ?? 'not in the source');
  if (o.action === 'rotate') return mdText(rotationText(o.rotation!));
  if (o.action === 'skip' && o.changes.length === 0) return mdText(o.reason ?? '');
  return o.changes
    .map((c) =>
      c.withheld
        ? `${c.drift ? '**drift**: ' : ''}${codeText(c.path)}: ${withheldText}`
        : `${c.drift ? `**drift**: ${drift(c)}<br>` : ''}${codeText(c.path)}: ${c.before === undefined ? '(unset)' : code(c.before)} → ${c.after === undefined ? '(removed)' : code(c.after)}`,
    )
    .join('<br>');
}

function whoText(o: ReportObject): string {
  const who = [...new Set(o.changes.map((c) => c.lastChangedBy).filter(Boolean).map((b) => mdText(byText(b))))];
  return who.join('<br>');
}

export function renderMarkdown(r: Report): string {
  const lines = [headline(r), ''];
  const target = r.mode === 'validate' ? '' : ` → ${codeText(r.target)}`;
  lines.push(`Source ${codeText(r.source.id)}${r.source.revision ? ` at ${codeText(r.source.revision.slice(0, 12))}` : ''}${target}`, '');
  if (r.refused) lines.push(`> **Refused:** ${mdText(r.refused)}`, '');
  if (r.attributionUnavailable) lines.push(`> ${mdText(attributionUnavailableText(r.attributionUnavailable))}`, '');
  if (r.errors.length > 0) {
    lines.push('### Errors', '', ...r.errors.map((e) => `- ${codeText(`${e.file}:${e.line}:${e.column}`)}: ${mdText(e.message)}`), '');
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
      const where = o.file ? codeText(`${o.file}:${o.line}:${o.column}`) : '';
      const change = o.error ? `${changeText(o)}<br>**${mdText(o.error)}**` : changeText(o);
      lines.push(`| ${action} | ${mdText(`${o.kind}/${o.name}`)} | ${where} | ${cell(change)} | ${cell(whoText(o))} |`);
    }
    lines.push('');
  }
  const notes = r.objects.flatMap((o) => [
    ...(o.keyFile ? [`key written to ${codeText(o.keyFile)}`] : []),
    ...(o.keySecret && !o.rotation ? [`key delivered to ${codeText(o.keySecret)}`] : []),
    ...(o.rotation && o.action !== 'rotate' ? [mdText(rotationText(o.rotation))] : []),
    ...(o.note && !o.keyFile ? [mdText(o.note)] : []),
  ].map((text) => `- ${mdText(`${o.kind}/${o.name}`)}: ${text}`));
  if (notes.length > 0) lines.push(...notes, '');
  const skipped = r.objects.filter((o) => o.action === 'skip' && !o.drift);
  if (skipped.length > 0) {
    lines.push(`<details><summary>Skipped (${skipped.length})</summary>`, '', ...skipped.map((o) => `- ${mdText(`${o.kind}/${o.name}`)}: ${mdText(o.reason ?? '')}`), '', '</details>', '');
  }
  lines.push(...keyHealthMarkdown(r.keyHealth, r.generatedAt));
  if (r.mode !== 'validate') lines.push(`${r.summary.unchanged} unchanged.`);
  return `${lines.join('\n')}\n`;
}
