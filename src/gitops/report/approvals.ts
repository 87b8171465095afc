/** The approvals section of a report (gitops/approvals/), as text and as Markdown. */
import { md, mdJoin, type Md } from './markdown-escape.js';
import type { Report } from './report.js';

const logins = (ls: string[]) => ls.map((l) => `@${l}`).join(', ');

export function approvalsText(r: Report): string[] {
  const a = r.approvals;
  if (!a) return [];
  const lines = [`Approvals on pull request ${a.pullRequest} (author @${a.author}, head ${a.headSha.slice(0, 12)}):`];
  for (const t of a.teams.filter((t) => t.approvedBy.length > 0)) lines.push(`  ${t.holder ?? 'team'} "${t.team}": approved by ${logins(t.approvedBy)}`);
  for (const m of a.missing) lines.push(`  approval missing: ${m}`);
  if (a.teams.length === 0) lines.push('  no team is changed: no approval is needed');
  return lines;
}

export function approvalsMarkdown(r: Report): Md[] {
  const a = r.approvals;
  if (!a) return [];
  const lines: Md[] = [md`### Approvals`, md``, md`Pull request ${a.pullRequest}, author @${a.author}:`, md``];
  for (const t of a.teams.filter((t) => t.approvedBy.length > 0)) lines.push(md`- ✅ ${t.holder ?? 'team'} ${t.team}: approved by ${mdJoin(t.approvedBy.map((l) => `@${l}`), ', ')}`);
  for (const m of a.missing) lines.push(md`- ❌ **approval missing**: ${m}`);
  if (a.teams.length === 0) lines.push(md`- no team is changed: no approval is needed`);
  lines.push(md``);
  return lines;
}
