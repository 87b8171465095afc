/** The report for a terminal: one line per object, like terraform's plan summary. */
import type { Report } from './report.js';

const symbol: Record<string, string> = { create: '+', update: '~', replace: '±', delete: '-', skip: ' ' };

export function renderText(r: Report): string {
  const lines: string[] = [];
  // The source id decides what a prune may delete: say which one this run used.
  if (r.mode !== 'validate') {
    const at = r.source.revision ? ` at ${r.source.revision.slice(0, 12)}` : '';
    lines.push(`Source ${r.source.id} (${r.source.description}${at}) -> ${r.target}`);
  }
  for (const e of r.errors) lines.push(`${e.file}:${e.line}:${e.column}: ${e.message}`);
  if (r.refused) lines.push(`refused: ${r.refused}`);
  for (const o of r.objects) {
    const where = o.file ? `  (${o.file}:${o.line}:${o.column})` : '';
    const result = o.result ? ` -> ${o.result}` : '';
    lines.push(`${symbol[o.action]} ${o.kind}/${o.name}${o.action === 'skip' ? `: skipped, ${o.reason ?? ''}` : ''}${o.drift ? ' [drift]' : ''}${result}${where}`);
    for (const c of o.action === 'create' ? [] : o.changes) {
      const by = c.lastChangedBy ? `  (last changed by ${c.lastChangedBy.manager})` : '';
      lines.push(`    ${c.path}: ${JSON.stringify(c.before) ?? '(unset)'} -> ${JSON.stringify(c.after) ?? '(removed)'}${by}`);
    }
    if (o.error) lines.push(`    error: ${o.error}`);
    if (o.keyFile) lines.push(`    key written to ${o.keyFile}`);
    if (o.keySecret) lines.push(`    key delivered to ${o.keySecret}`);
    if (o.note) lines.push(`    note: ${o.note}`);
  }
  const s = r.summary;
  if (r.outcome === 'invalid') {
    lines.push(`${r.errors.length} error(s) in the manifests: nothing was ${r.mode === 'apply' ? 'written' : 'planned'}.`);
    return `${lines.join('\n')}\n`;
  }
  if (r.outcome === 'refused') {
    lines.push('Nothing was written.');
    return `${lines.join('\n')}\n`;
  }
  lines.push(
    `${r.mode === 'apply' ? 'Applied' : 'Plan'}: ${s.create} to create, ${s.update} to update, ${s.replace} to replace, ${s.delete} to delete, ${s.unchanged} unchanged, ${s.skip} skipped${s.drifted ? `, ${s.drifted} drifted` : ''}${s.failed ? `, ${s.failed} failed` : ''}.`,
  );
  return `${lines.join('\n')}\n`;
}
