/**
 * Issue 42, points 1 and 9: the Warnings section quoted names from manifests unescaped (a missing
 * owner team named `zz\n<!-- x` hid the plan table from the comment), and bidi, zero-width and
 * look-alike characters reached the comment unchanged (`["carla"] -> ["carla","cаrla","carla​"]`).
 * Every section now goes through one escaping writer, and such names are shown escaped and flagged.
 * The generated test: whatever names a report holds, its Markdown has the structure it has with
 * plain names (the same headings, lines, table rows and cells, list items; no HTML comment).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderMarkdown } from '../../src/gitops/report/markdown.js';
import { renderText } from '../../src/gitops/report/text.js';
import type { Report } from '../../src/gitops/report/report.js';
import { teamkeys } from '../support/cli.js';

const hiddenHeading = '### Hidden or look-alike characters';

/** Each line's kind, as a Markdown reader finds it: what the comment's structure is. The hidden-characters section is left out (plain names have none). */
function structure(md: string): string[] {
  const lines = md.split('\n');
  const start = lines.indexOf(hiddenHeading);
  const kept = start < 0 ? lines : [...lines.slice(0, start), ...lines.slice(lines.indexOf('', lines.indexOf('', start + 2) + 1) + 1)];
  return kept.map((l) => {
    if (/^ {0,3}#{1,6}(\s|$)/.test(l)) return `heading ${l}`;
    if (l.startsWith('|')) return `row of ${(l.match(/(?<!\\)\|/g) ?? []).length - 1} cells`;
    if (/^ {0,3}[-+*] /.test(l)) return 'list item';
    if (/^ {0,3}\d+[.)] /.test(l)) return 'numbered item';
    if (l.startsWith('> ')) return 'quote';
    if (/^ {0,3}(```|~~~)/.test(l)) return 'fence';
    if (/^ {0,3}<|^<\/?details>/.test(l)) return `html ${l.replace(/\(\d+\)/, '')}`;
    if (l === '') return 'blank';
    return 'paragraph';
  });
}

/** A report where every text a manifest or the server gives is `t(i)`. */
function reportOf(t: (i: number) => string): Report {
  const by = { manager: t(1), operation: 'Update', user: t(2), keyName: t(3), time: t(4) };
  return {
    apiVersion: 'teamkeys/v1',
    kind: 'Report',
    mode: 'plan',
    generatedAt: '2026-11-24T00:00:00Z',
    source: { id: t(5), description: t(6), revision: t(7) },
    target: t(8),
    outcome: 'changes',
    attributionUnavailable: t(9),
    summary: { create: 1, update: 1, replace: 0, delete: 1, unchanged: 2, skip: 1, drifted: 1, failed: 0 },
    errors: [{ file: t(10), line: 1, column: 2, message: t(11) }],
    warnings: [{ file: t(12), line: 3, column: 4, message: `spec.owner.team: team "${t(13)}" exists neither in the source nor on the server` }],
    objects: [
      { kind: 'Team', name: t(14), action: 'create', drift: false, file: t(15), line: 1, column: 1, changes: [{ path: '', after: { users: [t(16)], [t(17)]: t(18) }, drift: false }] },
      {
        kind: 'Team',
        name: t(19),
        action: 'update',
        drift: true,
        error: t(20),
        changes: [
          { path: `spec.${t(21)}`, before: [t(22)], after: [t(22), t(23)], drift: true, description: `added \`${JSON.stringify(t(23))}\` to spec.users`, lastChangedBy: by },
          { path: t(24), drift: false, withheld: true },
        ],
      },
      { kind: 'OwnedAccessKey', name: t(25), action: 'delete', drift: false, reason: t(26), changes: [], keySecret: t(27), note: t(28) },
      { kind: 'OwnedAccessKey', name: t(29), action: 'skip', drift: false, reason: `managed by another source (${t(30)})`, changes: [] },
    ],
    keyHealth: {
      warnExpirySeconds: 86_400,
      warnUnusedSeconds: 86_400,
      expiring: [{ name: t(31), owner: t(32), type: t(33), expiresAt: '2026-11-25T00:00:00Z' }],
      unused: [{ name: t(34), owner: t(35), lastUse: '2026-10-01T00:00:00Z', neverUsed: true }],
    },
  };
}

const hostile = ['\n', '\r\n', '\r', '<!--', '-->', '<!-- x', '<details>', '</details>', '<img src=x>', '|', '\\|', '`', '```', '# ', '## h', '- ', '1. ', '> ', '**', '[a](https://evil)', '&lt;', '&#124;', '\u2028', '\u202e', '\u2066', '\u200b', '\u200d', '\ufeff', '\u0000', '\u001b[31m', '\u0085', 'cаrla', 'ρ', '\ud83d\ude00', '    ', '\t'];
const text = fc.array(fc.oneof(fc.constantFrom(...hostile), fc.string({ unit: 'grapheme', maxLength: 4 }), fc.string({ unit: 'binary', maxLength: 3 })), { minLength: 1, maxLength: 5 }).map((parts) => parts.join(''))
  // An empty text is an absent one to the report (no revision, no error): not what this test is about.
  .filter((s) => s.length > 0);

describe('report structure whatever the names', () => {
  let work: string;
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'teamkeys-structure-'));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('a missing owner team named with a newline and an HTML comment opener leaves the plan table in the comment', () => {
    const source = join(work, 'warn');
    mkdirSync(join(source, 'teams'), { recursive: true });
    writeFileSync(join(source, 'teams/a-hidden.yaml'), `apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: aaa\nspec:\n  owner:\n    team: "zz\\n<!-- x"\n`);
    writeFileSync(join(source, 'teams/platform.yaml'), 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: teams-admin\nspec:\n  users: [mallory]\n');
    const r = teamkeys(['plan', '--source', source, '--source-id', 'warn', '--store', `sqlite:${join(work, 'warn.db')}`, '--report-dir', join(work, 'r1')]);
    expect(r.code, r.stderr).toBe(0);
    const md = readFileSync(join(work, 'r1/report.md'), 'utf8');
    expect(md).toContain('### Warnings');
    expect(md).toContain('team "zz&#92;u000a&lt;!-- x" exists neither');
    expect(md).not.toContain('<!--');
    expect(md.split('\n').filter((l) => l.startsWith('| create'))).toEqual([expect.stringContaining('Team/aaa'), expect.stringContaining('Team/teams-admin')]);
  });

  it('bidi, zero-width and look-alike letters in names are shown as escapes and flagged, in Markdown and in the terminal', () => {
    const source = join(work, 'lookalike');
    mkdirSync(join(source, 'teams'), { recursive: true });
    writeFileSync(join(source, 'teams/platform.yaml'), 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: platform\nspec:\n  users: ["carla", "c\\u0430rla", "carla\\u200b", "\\u202eadmin"]\n');
    const r = teamkeys(['plan', '--source', source, '--source-id', 'lookalike', '--store', `sqlite:${join(work, 'lookalike.db')}`, '--report-dir', join(work, 'r2')]);
    expect(r.code, r.stderr).toBe(0);
    const md = readFileSync(join(work, 'r2/report.md'), 'utf8');
    expect(md).toContain('`["carla","c\\u0430rla","carla\\u200b","\\u202eadmin"]`');
    expect(md).toContain(hiddenHeading);
    expect(md).toMatch(/3 text\(s\) below hold control, bidi or zero-width characters/);
    expect(md).not.toMatch(/[\u0430\u200b\u202e]/);
    expect(r.stdout).toContain('warning: 3 text(s) in this report hold control, bidi or zero-width characters');
    expect(r.stdout).not.toMatch(/[\u0430\u200b\u202e]/);
    // A name wholly in another script is no look-alike: shown as written, not flagged.
    const plain = reportOf((i) => (i === 16 ? 'мария' : `name${i}`));
    expect(renderMarkdown(plain)).toContain('"мария"');
    expect(renderMarkdown(plain)).not.toContain(hiddenHeading);
  });

  it('for generated names with newlines, HTML, Markdown, control, bidi and zero-width characters, the Markdown keeps the structure plain names give', () => {
    const plain = structure(renderMarkdown(reportOf((i) => `name${i}`)));
    expect(plain.filter((k) => k.startsWith('row'))).toHaveLength(2 + 3 + 3 + 3);
    fc.assert(
      fc.property(fc.array(text, { minLength: 36, maxLength: 36 }), (names) => {
        const report = reportOf((i) => names[i]!);
        const md = renderMarkdown(report);
        expect(structure(md)).toEqual(plain);
        expect(md).not.toContain('<!--');
        expect(md.replace(/<br>|<\/?details>|<\/?summary>/g, '')).not.toContain('<');
        expect(md).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2028\u2029\u2066-\u2069\ufeff]/);
        for (const line of md.split('\n')) expect((line.match(/`/g) ?? []).length % 2).toBe(0);
        const terminal = renderText(report);
        expect(terminal.split('\n').filter((l) => l.startsWith('::'))).toEqual([]);
        expect(terminal).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/);
      }),
      { numRuns: 200, seed: 42 },
    );
  });
});
