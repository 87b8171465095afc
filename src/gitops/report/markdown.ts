/**
 * The report as Markdown: for pull request comments, job summaries and the daemon's latest run.
 * Every line is an `Md` made with the `md` template (markdown-escape.ts): whatever text from a
 * manifest or the server goes in is escaped, whichever section quotes it.
 */
import { codeText, codeValue as code, md, mdCell as cell, mdJoin, mdWithCode, type Md } from './markdown-escape.js';
import { suspiciousTexts } from './hidden-text.js';
import { accessChangeMarkdown } from './access-change.js';
import { keyHealthMarkdown } from './key-health.js';
import { approvalsMarkdown } from './approvals.js';
import { settingPaths } from '../plan/ignore-fields.js';
import type { Report, ReportObject } from './report.js';
import { attributionUnavailableText, countsText, rotationText, whoText as byText, withheldText } from './who.js';
import { append } from '../append.js';

const drift = (c: ReportObject['changes'][number]) => md`${mdWithCode(c.description ?? `changed ${c.path}`)}: ${byText(c.lastChangedBy)}`;
const at = (p: { file: string; line?: number; column?: number }) => codeText(`${p.file}:${p.line}:${p.column}`);

function headline(r: Report): Md {
  const s = r.summary;
  const parts = countsText(r.mode, s, false);
  const title =
    r.outcome === 'invalid' ? 'invalid manifests' : r.outcome === 'refused' ? 'refused' : r.mode === 'validate' ? 'valid' : parts.length ? parts.join(', ') : 'no changes';
  const extra = [s.drifted ? `${s.drifted} drifted` : '', s.failed ? `${s.failed} failed` : ''].filter(Boolean).join(', ');
  return md`## teamkeys ${r.mode}: ${title}${extra ? ` (${extra})` : ''}`;
}

function changeText(o: ReportObject): Md {
  if (o.action === 'create') {
    // A reviewer approves what a new object grants: show its fields, not just that it is new.
    const spec = o.changes.find((c) => c.path === '')?.after;
    const fields = spec && typeof spec === 'object' ? Object.entries(spec).map(([k, v]) => md`${codeText(`spec.${k}`)}: ${code(v)}`) : [];
    return mdJoin(['new object', ...fields], '<br>');
  }
  if (o.action === 'delete') return md`${o.reason ?? 'not in the source'}`;
  if (o.action === 'rotate') return md`${rotationText(o.rotation!)}`;
  if (o.action === 'skip' && o.changes.length === 0) return md`${o.reason ?? ''}`;
  return mdJoin(
    [...(o.action === 'update' && o.reason ? [md`${o.reason}`] : []), ...o.changes.map((c) =>
      c.withheld
        ? md`${c.drift ? md`**drift**: ` : ''}${codeText(c.path)}: ${withheldText}`
        : md`${c.drift ? md`**drift**: ${drift(c)}<br>` : ''}${codeText(c.path)}: ${c.before === undefined ? '(unset)' : code(c.before)} → ${c.after === undefined ? '(removed)' : code(c.after)}`,
    )],
    '<br>',
  );
}

function whoText(o: ReportObject): Md {
  const who = [...new Set(o.changes.map((c) => c.lastChangedBy).filter(Boolean).map((b) => byText(b)))];
  return mdJoin(who, '<br>');
}

/** The texts holding hidden or look-alike characters, listed first so a reviewer reads the rest knowing. */
function suspiciousSection(r: Report): Md[] {
  const texts = [...suspiciousTexts(r)];
  if (texts.length === 0) return [];
  const shown = texts.slice(0, 20).map((t) => md`- ${code(t)}`);
  const more = texts.length > 20 ? [md`- and ${texts.length - 20} more`] : [];
  return [md`### Hidden or look-alike characters`, md``, md`${texts.length} text(s) below hold control, bidi or zero-width characters, or letters of another script inside a Latin word; they are shown as \\u escapes:`, md``, ...shown, ...more, md``];
}

/** Changes to ignore-fields and sync-strategy, shown on their own: they change what every later plan compares and writes. */
function settingsSection(r: Report): Md[] {
  const rows = r.objects.flatMap((o) =>
    o.changes
      .filter((c) => settingPaths[c.path] !== undefined)
      .map((c) => md`- ${`${o.kind}/${o.name}`}: ${codeText(settingPaths[c.path]!)} ${c.withheld ? 'changes (its live value is not shown)' : md`${c.before === undefined ? '(unset)' : code(c.before)} → ${c.after === undefined ? '(removed)' : code(c.after)}`}`),
  );
  if (rows.length === 0) return [];
  return [md`### Reconciler settings changed`, md``, md`These change what the reconciler compares and writes for the object from now on: review them as changes of their own.`, md``, ...rows, md``];
}

function objectsTable(r: Report): Md[] {
  // Drift left in place (report-only) belongs in the table too: it is what the report is for.
  const acted = r.objects.filter((o) => o.action !== 'skip' || o.drift);
  if (acted.length === 0) return [];
  const rows = acted.map((o) => {
    const action =
      o.action === 'skip' ? 'drift (reported, not reverted)' : `${o.action}${o.drift ? ' (drift)' : ''}${o.result && o.result !== 'Skipped' ? ` → ${o.result}` : ''}`;
    const where = o.file ? at({ ...o, file: o.file }) : '';
    const change = o.error ? md`${changeText(o)}<br>**${o.error}**` : changeText(o);
    return md`| ${action} | ${`${o.kind}/${o.name}`} | ${where} | ${cell(change)} | ${cell(whoText(o))} |`;
  });
  return [md`| Action | Object | Where | Change | Last changed by |`, md`|---|---|---|---|---|`, ...rows, md``];
}

function notesOf(r: Report): Md[] {
  return r.objects.flatMap((o) =>
    [
      ...(o.keyFile ? [md`key written to ${codeText(o.keyFile)}`] : []),
      ...(o.keySecret && !o.rotation ? [md`key delivered to ${codeText(o.keySecret)}`] : []),
      ...(o.rotation && o.action !== 'rotate' ? [md`${rotationText(o.rotation)}`] : []),
      ...(o.note && !o.keyFile ? [md`${o.note}`] : []),
    ].map((text) => md`- ${`${o.kind}/${o.name}`}: ${text}`),
  );
}

function renderLines(r: Report): Md[] {
  const lines: Md[] = [headline(r), md``];
  const target = r.mode === 'validate' ? '' : md` → ${codeText(r.target)}`;
  lines.push(md`Source ${codeText(r.source.id)}${r.source.revision ? md` at ${codeText(r.source.revision.slice(0, 12))}` : ''}${target}`, md``);
  if (r.keySecretOwners) lines.push(md`Keys are delivered (key-secret) only to GitHub owners: ${mdJoin(r.keySecretOwners.map(codeText), ', ')}`, md``);
  lines.push(...suspiciousSection(r));
  if (r.refused) lines.push(md`> **Refused:** ${r.refused}`, md``);
  lines.push(...approvalsMarkdown(r));
  if (r.attributionUnavailable) lines.push(md`> ${attributionUnavailableText(r.attributionUnavailable)}`, md``);
  if (r.errors.length > 0) append(lines, [md`### Errors`, md``, ...r.errors.map((e) => md`- ${at(e)}: ${e.message}`), md``]);
  if (r.warnings?.length) append(lines, [md`### Warnings`, md``, ...r.warnings.map((w) => md`- ${at(w)}: ${w.message}`), md``]);
  append(append(append(lines, accessChangeMarkdown(r.accessChange)), settingsSection(r)), objectsTable(r));
  const notes = notesOf(r);
  if (notes.length > 0) lines.push(...notes, md``);
  const skipped = r.objects.filter((o) => o.action === 'skip' && !o.drift);
  if (skipped.length > 0) {
    append(lines, [md`<details><summary>Skipped (${skipped.length})</summary>`, md``, ...skipped.map((o) => md`- ${`${o.kind}/${o.name}`}: ${o.reason ?? ''}`), md``, md`</details>`, md``]);
  }
  append(lines, keyHealthMarkdown(r.keyHealth, r.generatedAt));
  if (r.mode !== 'validate') lines.push(md`${r.summary.unchanged} unchanged.`);
  return lines;
}

export function renderMarkdown(r: Report): string {
  return `${mdJoin(renderLines(r), '\n').markup}\n`;
}
