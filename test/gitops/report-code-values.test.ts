/**
 * Issue 40 point 8: report.md showed a changed string in a code span with its JSON quotes
 * (`"Platform"`). A plain string is shown as written; JSON stays for non-strings and for strings
 * that would read as something else without their quotes, or that the escaping must keep.
 */
import { describe, expect, it } from 'vitest';
import { renderMarkdown } from '../../src/gitops/report/markdown.js';
import type { Report, ReportObject } from '../../src/gitops/report/report.js';

function reportOf(changes: ReportObject['changes']): string {
  const report: Report = {
    apiVersion: 'teamkeys/v1',
    kind: 'Report',
    mode: 'plan',
    generatedAt: '2026-11-24T00:00:00Z',
    outcome: 'changes',
    source: { id: 'ci', description: 'a folder' },
    target: 'https://127.0.0.1:8443',
    summary: { create: 0, update: 1, replace: 0, delete: 0, unchanged: 0, skip: 0, drifted: 0, failed: 0 },
    errors: [],
    objects: [{ kind: 'Team', name: 'platform', action: 'update', drift: true, changes }],
  };
  return renderMarkdown(report);
}

describe('values in the Markdown report’s code spans', () => {
  it('a changed string is shown without its JSON quotes, in a change and in a drift description', () => {
    const md = reportOf([
      { path: 'spec.displayName', before: 'Hacked', after: 'Platform team', drift: false },
      { path: 'spec.users', before: ['ana', 'mallory'], after: ['ana'], drift: true, description: 'added `"mallory"` to spec.users' },
    ]);
    expect(md).toContain('`spec.displayName`: `Hacked` → `Platform team`');
    expect(md).toContain('**drift**: added `mallory` to spec.users');
    expect(md).toContain('`spec.users`: `["ana","mallory"]` → `["ana"]`');
    expect(md).not.toContain('`"Platform team"`');
  });

  it('keeps JSON where the bare text would be ambiguous or needs escaping: empty, spaces at the ends, number/boolean/null look-alikes, quotes, pipes, hidden characters', () => {
    const cases: [unknown, string][] = [
      ['', '`""`'],
      [' padded ', '`" padded "`'],
      ['42', '`"42"`'],
      ['1e3', '`"1e3"`'],
      ['true', '`"true"`'],
      ['null', '`"null"`'],
      ['[1]', '`"[1]"`'],
      ['say "hi"', '`"say \\"hi\\""`'],
      ['a|b', '`"a\\u007cb"`'],
      ['a\u200bb', '`"a\\u200bb"`'],
      [42, '`42`'],
      [true, '`true`'],
      [null, '`null`'],
    ];
    for (const [after, shown] of cases) {
      expect(reportOf([{ path: 'spec.description', before: 'x', after, drift: false }]), JSON.stringify(after)).toContain(`\`x\` → ${shown}`);
    }
  });
});
