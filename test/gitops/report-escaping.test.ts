/**
 * Issue 24, point 11: text from manifests reaches pull request comments escaped. A hostile
 * manifest (a field named like another source's comment marker, values with pipes, backticks and
 * newlines, a file name full of them) gives Markdown in which none of it is markup; and for any
 * strings at all in a report (fast-check), the Markdown has no HTML comment, no tag but the
 * report's own, table rows that keep their cells, and code spans that close on their line.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commentBody, commentMarker } from '../../src/github-action/comment.js';
import { renderMarkdown } from '../../src/gitops/report/markdown.js';
import type { Report, ReportObject } from '../../src/gitops/report/report.js';
import { teamkeys } from '../support/cli.js';

const marker = '<!-- teamkeys-plan source="other" -->';
const hostile = [marker, '-->', '<!--', '`', '``', '|', '\\|', '\n', '\r\n', '<script>x</script>', '<br>', '**', '[a](https://evil)', '# h', '&lt;', '\u2028'];
const text = fc.array(fc.oneof(fc.string({ unit: 'binary', maxLength: 8 }), fc.constantFrom(...hostile)), { maxLength: 6 }).map((parts) => parts.join(''));

/** The report's own tags; any other `<` would be markup from the data. */
const ownTags = /<br>|<\/?details>|<\/?summary>/g;
const unescapedPipes = (line: string) => (line.match(/(?<!\\)\|/g) ?? []).length;

function invariants(md: string, objects: number): void {
  expect(md).not.toContain('<!--');
  expect(md).not.toContain('-->');
  expect(md.replace(ownTags, '')).not.toContain('<');
  const rows = md.split('\n').filter((l) => l.startsWith('| ') || l.startsWith('|---'));
  expect(rows).toHaveLength(objects > 0 ? objects + 2 : 0);
  for (const row of rows) expect(unescapedPipes(row)).toBe(6);
  for (const line of md.split('\n')) expect((line.match(/`/g) ?? []).length % 2).toBe(0);
}

describe('Markdown from hostile manifests', () => {
  let work: string;
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'teamkeys-escape-'));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('an unknown field named like another source\'s marker is shown as text, and plants no marker in the comment', () => {
    const source = join(work, 'unknown-field');
    mkdirSync(join(source, 'teams'), { recursive: true });
    writeFileSync(join(source, 'teams/finance.yaml'), `apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: finance\nspec:\n  users: [ana]\n  "${marker.replace(/"/g, '\\"')}": 1\n`);
    const r = teamkeys(['validate', '--source', source, '--report-dir', join(work, 'r1')]);
    expect(r.code).toBe(1);
    const md = readFileSync(join(work, 'r1/report.md'), 'utf8');
    expect(md).toContain('unknown field "spec.&lt;!-- teamkeys-plan source="other" --&gt;"');
    invariants(md, 0);
    const body = commentBody('ci', md, undefined);
    expect(body.split(commentMarker('other'))).toHaveLength(1);
    expect(body.startsWith(`${commentMarker('ci')}\n`)).toBe(true);
    expect(body.indexOf('<!--', 1)).toBe(-1);
  });

  it('in the terminal (and a CI log), a newline from a manifest cannot start a workflow command line', () => {
    const source = join(work, 'log');
    mkdirSync(join(source, 'teams'), { recursive: true });
    writeFileSync(join(source, 'teams/log.yaml'), 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: log\nspec:\n  "x\\n::error::forged\\u001b[31m": 1\n');
    writeFileSync(join(source, '::warning::file.yaml'), 'kind: 1\n');
    const r = teamkeys(['validate', '--source', source]);
    expect(r.code).toBe(1);
    const lines = `${r.stdout}${r.stderr}`.split('\n');
    expect(lines.filter((l) => l.trimStart().startsWith('::'))).toEqual([]);
    expect(r.stdout).toContain('unknown field "spec.x\\u000a::error::forged\\u001b[31m"');
    expect(r.stdout).toContain('./::warning::file.yaml:1:7: unknown kind 1');
  });

  it('values with pipes, backticks, newlines and tags, in a file named with them, keep to their cells in a plan', () => {
    const source = join(work, 'values');
    mkdirSync(join(source, 'teams'), { recursive: true });
    const description = `a | b \` c \`\` d\n| e ${marker} <img src=x>`;
    writeFileSync(join(source, 'teams', 'x|`<!--y-->`.yaml'), `apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: finance\nspec:\n  users: [ana]\n  description: ${JSON.stringify(description)}\n`);
    const r = teamkeys(['plan', '--source', source, '--source-id', 'escape', '--store', `sqlite:${join(work, 'plan.db')}`, '--report-dir', join(work, 'r2')]);
    expect(r.code).toBe(0);
    const md = readFileSync(join(work, 'r2/report.md'), 'utf8');
    invariants(md, 1);
    // The value is all there, as JSON with escapes (lossless), and the file name too.
    expect(md).toContain('`spec.description`: `"a \\u007c b \\u0060 c \\u0060\\u0060 d\\n\\u007c e \\u003c!-- teamkeys-plan source=\\"other\\" --\\u003e \\u003cimg src=x\\u003e"`');
    expect(md).toContain('`"teams/x\\u007c\\u0060\\u003c!--y--\\u003e\\u0060.yaml:1:1"`');
  });

  it('for any strings anywhere in a report, the Markdown holds no comment, no foreign tag, whole cells and closed code spans (generated)', () => {
    const attribution = fc.record({ manager: text, operation: text, time: text, user: text, keyName: text });
    const change = fc.record(
      { path: text, before: fc.jsonValue({ maxDepth: 2 }), after: fc.jsonValue({ maxDepth: 2 }), drift: fc.boolean(), description: text, lastChangedBy: attribution, withheld: fc.constant(true as const) },
      { requiredKeys: ['path', 'drift'] },
    );
    const object = fc.record(
      {
        kind: text,
        name: text,
        action: fc.constantFrom('create', 'update', 'replace', 'delete', 'skip') as fc.Arbitrary<ReportObject['action']>,
        reason: text,
        file: text,
        line: fc.nat(),
        column: fc.nat(),
        drift: fc.boolean(),
        error: text,
        keyFile: text,
        keySecret: text,
        note: text,
        changes: fc.array(change, { maxLength: 3 }),
      },
      { requiredKeys: ['kind', 'name', 'action', 'drift', 'changes'] },
    );
    const report = fc.record({
      mode: fc.constantFrom('validate', 'plan', 'apply') as fc.Arbitrary<Report['mode']>,
      source: fc.record({ id: text, description: text, revision: text }),
      target: text,
      refused: text,
      errors: fc.array(fc.record({ file: text, line: fc.nat(), column: fc.nat(), message: text }), { maxLength: 3 }),
      objects: fc.array(object, { maxLength: 4 }),
    });
    fc.assert(
      fc.property(report, (r) => {
        const full: Report = {
          apiVersion: 'teamkeys/v1',
          kind: 'Report',
          generatedAt: '2026-11-24T00:00:00Z',
          outcome: 'changes',
          summary: { create: 1, update: 0, replace: 0, delete: 0, unchanged: 0, skip: 0, drifted: 0, failed: 0 },
          ...r,
        };
        const md = renderMarkdown(full);
        invariants(md, full.objects.filter((o) => o.action !== 'skip' || o.drift).length);
        expect(commentBody('ci', md, undefined).indexOf('<!--', 1)).toBe(-1);
      }),
      { numRuns: 300 },
    );
  });
});
