/**
 * Issue 40, point 5: the docs and the shipped examples agree. Every manifest recipe in docs/ (a YAML
 * block of Teams or OwnedAccessKeys) is put beside the example GitOps repository and validated, as
 * plan and apply validate first, with the example policies: none is refused.
 */
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { root, teamkeys } from '../support/cli.js';

interface Recipe {
  where: string;
  yaml: string;
}

function recipes(): Recipe[] {
  const found: Recipe[] = [];
  for (const page of readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md')).sort()) {
    const text = readFileSync(join(root, 'docs', page), 'utf8');
    for (const m of text.matchAll(/^( *)```ya?ml\n([\s\S]*?)^ *```/gm)) {
      // A block inside a list item is indented; its YAML is not.
      const yaml = m[2]!.split('\n').map((l) => l.slice(m[1]!.length)).join('\n');
      if (!/^apiVersion: management\.service\/v1$/m.test(yaml) || !/^kind: (Team|OwnedAccessKey|FederatedCredential)$/m.test(yaml)) continue;
      found.push({ where: `docs/${page}:${text.slice(0, m.index).split('\n').length}`, yaml });
    }
  }
  return found;
}

const work = mkdtempSync(join(tmpdir(), 'teamkeys-docs-recipes-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the recipes in docs/ against the example policies', () => {
  const all = recipes();
  it('finds the recipes (the CI plan team of action.md and the rotated keys of keys.md among them)', () => {
    expect(all.map((r) => r.where)).toEqual(expect.arrayContaining([expect.stringMatching(/^docs\/action\.md:/), expect.stringMatching(/^docs\/keys\.md:/)]));
  });

  it.each(all.map((r) => [r.where, r] as const))('%s passes teamkeys validate with examples/policies beside examples/gitops', (where, recipe) => {
    const source = join(work, where.replace(/[^\w]/g, '-'));
    cpSync(join(root, 'examples/gitops'), source, { recursive: true });
    writeFileSync(join(source, 'recipe.yaml'), recipe.yaml);
    const r = teamkeys(['validate', '--source', source, '--policy', join(root, 'examples/policies')]);
    expect(r.stdout + r.stderr).toMatch(/^The manifests are valid/);
    expect(r.code).toBe(0);
  });
});

describe("the README's first lines", () => {
  it('say what npm ci needs where no prebuilt better-sqlite3 fits: a compiler, python3 and make, and how long', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const intro = readme.slice(0, readme.indexOf('\n## '));
    expect(intro).toMatch(/prebuilt binary/);
    expect(intro).toMatch(/C\+\+ compiler, `python3` and `make`/);
    expect(intro).toMatch(/takes a minute or two longer/);
  });
});
