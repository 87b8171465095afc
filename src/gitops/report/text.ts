/** The report for a terminal: one line per object, like terraform's plan summary. */
import { suspiciousTexts, visible } from './hidden-text.js';
import { accessChangeText } from './access-change.js';
import { keyHealthText } from './key-health.js';
import type { Report } from './report.js';
import { approvalsText } from './approvals.js';
import { attributionUnavailableText, countsText, driftText, rotationText, withheldText } from './who.js';
import { append } from '../append.js';

const symbol: Record<string, string> = { create: '+', update: '~', replace: '±', delete: '-', rotate: '↻', skip: ' ' };

/**
 * One line as a terminal or a CI log shows it: text from manifests may hold control characters
 * (escape sequences, a newline and a workflow command after it), bidi and zero-width characters
 * and look-alike letters, written as `\u` escapes instead (hidden-text.ts).
 */
const oneLine = visible;
/** A file name at the start of a line never starts a workflow command (`::error::x.yaml`). */
const lineStart = (file: string) => (file.startsWith(':') ? `./${file}` : file);

export function renderText(r: Report): string {
  const lines: string[] = [];
  // The source id decides what a prune may delete: say which one this run used.
  if (r.mode !== 'validate') {
    const at = r.source.revision ? ` at ${r.source.revision.slice(0, 12)}` : '';
    lines.push(`Source ${r.source.id} (${r.source.description}${at}) -> ${r.target}`);
    if (r.keySecretOwners) lines.push(`Keys are delivered (key-secret) only to GitHub owners: ${r.keySecretOwners.join(', ')}`);
  }
  const suspicious = [...suspiciousTexts(r)];
  if (suspicious.length > 0) lines.push(`warning: ${suspicious.length} text(s) in this report hold control, bidi or zero-width characters, or letters of another script inside a Latin word (shown as \\u escapes): ${suspicious.slice(0, 20).map((t) => JSON.stringify(t)).join(', ')}${suspicious.length > 20 ? ', ...' : ''}`);
  for (const e of r.errors) lines.push(`${lineStart(e.file)}:${e.line}:${e.column}: ${e.message}`);
  for (const w of r.warnings ?? []) lines.push(`${lineStart(w.file)}:${w.line}:${w.column}: warning: ${w.message}`);
  if (r.refused) lines.push(`refused: ${r.refused}`);
  lines.push(...approvalsText(r));
  if (r.attributionUnavailable) lines.push(attributionUnavailableText(r.attributionUnavailable));
  for (const o of r.objects) {
    const where = o.file ? `  (${o.file}:${o.line}:${o.column})` : '';
    const result = o.result ? ` -> ${o.result}` : '';
    // An update's reason is what it holds back of git's (a key the server disabled: plan/ignore-fields.ts heldDisabled).
    const why = o.action === 'skip' ? `: skipped, ${o.reason ?? ''}` : o.action === 'update' && o.reason ? `: ${o.reason}` : '';
    lines.push(`${symbol[o.action]} ${o.kind}/${o.name}${why}${o.drift ? ' [drift]' : ''}${result}${where}`);
    for (const c of o.action === 'create' ? [] : o.changes) {
      if (c.withheld) {
        lines.push(`    ${c.path}: ${withheldText}${c.drift ? ' [drift]' : ''}`);
        continue;
      }
      const by = c.lastChangedBy ? `  (last changed by ${c.lastChangedBy.manager})` : '';
      lines.push(`    ${c.path}: ${JSON.stringify(c.before) ?? '(unset)'} -> ${JSON.stringify(c.after) ?? '(removed)'}${by}`);
      if (c.drift) lines.push(`      drift: ${driftText(c)}`);
    }
    if (o.rotation) lines.push(`    ${rotationText(o.rotation)}`);
    if (o.error) lines.push(`    error: ${o.error}`);
    if (o.keyFile) lines.push(`    key written to ${o.keyFile}`);
    if (o.keySecret && !o.rotation) lines.push(`    key delivered to ${o.keySecret}`);
    if (o.note) lines.push(`    note: ${o.note}`);
  }
  append(lines, accessChangeText(r.accessChange));
  append(lines, keyHealthText(r.keyHealth, r.generatedAt));
  const s = r.summary;
  if (r.outcome === 'invalid') {
    const nothing = { validate: '', plan: ': nothing was planned', apply: ': nothing was written' }[r.mode];
    lines.push(`${r.errors.length} error(s) in the manifests${nothing}.`);
    return `${lines.map(oneLine).join('\n')}\n`;
  }
  if (r.outcome === 'refused') {
    lines.push('Nothing was written.');
    return `${lines.map(oneLine).join('\n')}\n`;
  }
  if (r.mode === 'validate') {
    lines.push('The manifests are valid.');
    return `${lines.map(oneLine).join('\n')}\n`;
  }
  const counts = countsText(r.mode, s, true).join(', ');
  const drifted = s.drifted ? `, ${s.drifted} drifted${r.outcome === 'drifted' && r.mode === 'apply' ? ' (left in place)' : ''}` : '';
  const head = r.mode === 'apply' ? `${counts[0]!.toUpperCase()}${counts.slice(1)}` : `Plan: ${counts}`;
  lines.push(`${head}, ${s.unchanged} unchanged, ${s.skip} skipped${drifted}${s.failed ? `, ${s.failed} failed` : ''}.`);
  return `${lines.map(oneLine).join('\n')}\n`;
}
