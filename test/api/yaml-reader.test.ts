/**
 * One YAML reader for both sides of the house (issue 33): a request body (server/yaml-body.ts) and
 * a GitOps manifest (gitops/source/manifests.ts) meet the same bounds on depth, nodes, aliases,
 * decoded size and keys, and each side says so in its own words.
 */
import { describe, expect, it } from 'vitest';
import { parseManifests } from '../../src/gitops/source/manifests.js';
import { decodeYaml } from '../../src/server/yaml-body.js';

const head = 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: t\n';
const cases: { name: string; text: string; server: RegExp; cli: RegExp }[] = [
  { name: 'flow nesting 1,000 deep', text: `${head}spec: ${'['.repeat(1000)}${']'.repeat(1000)}\n`, server: /^the request body is nested more than 100 levels deep$/, cli: /^f\.yaml:5:\d+: nested more than 100 levels$/ },
  { name: 'block nesting 150 deep', text: `${head}spec:\n${Array.from({ length: 150 }, (_, i) => `${'  '.repeat(i + 1)}a:`).join('\n')}\n${'  '.repeat(151)}x: 1\n`, server: /^the request body is nested more than 100 levels deep$/, cli: /^f\.yaml:\d+:\d+: nested more than 100 levels$/ },
  { name: 'nesting past 100 through an alias', text: `${head}a: &a ${'['.repeat(60)}${']'.repeat(60)}\nspec: ${'['.repeat(60)}*a${']'.repeat(60)}\n`, server: /nested more than 100 levels deep/, cli: /: nested more than 100 levels$/ },
  { name: 'more than 100,000 nodes', text: `${head}spec:\n  users:\n${'  - a\n'.repeat(100_001)}`, server: /^the request body holds more than 100000 YAML nodes$/, cli: /^f\.yaml:\d+:\d+: holds more than 100000 YAML nodes$/ },
  // Nodes holding no scalar, counted by their indicators, tags and anchors (a review, stop 65:
  // 2,000,000 `- !t` items parsed whole in 38 s and 3.4 GB).
  { name: 'more than 100,000 tagged empty items', text: `${head}spec:\n  users:\n${'  - !t\n'.repeat(100_001)}`, server: /^the request body holds more than 100000 YAML nodes$/, cli: /^f\.yaml:\d+:\d+: holds more than 100000 YAML nodes$/ },
  { name: 'more than 100,000 empty items', text: `${head}spec:\n  users:\n${'  -\n'.repeat(100_001)}`, server: /^the request body holds more than 100000 YAML nodes$/, cli: /^f\.yaml:\d+:\d+: holds more than 100000 YAML nodes$/ },
  { name: 'more than 50,000 empty documents', text: `${head}${'--- !t\n'.repeat(50_001)}`, server: /YAML nodes|one document|more than one/, cli: /^f\.yaml:\d+:\d+: holds more than 100000 YAML nodes$/ },
  { name: 'a key that is a sequence', text: `${head}spec:\n  ? [a]\n  : 1\n`, server: /Map keys must be plain strings, numbers or booleans at line 6, column 5/, cli: /^f\.yaml:6:5: Map keys must be plain strings, numbers or booleans$/ },
  { name: 'a key that is an alias', text: `${head}x: &k a\nspec:\n  *k : 1\n`, server: /Map keys must be plain strings/, cli: /Map keys must be plain strings/ },
  { name: 'an alias inside its own anchor', text: `${head}spec: &s {x: *s}\n`, server: /refers to itself/, cli: /refers to itself/ },
  { name: 'aliases past the alias budget', text: `${head}a: &a [x]\nspec: [${Array.from({ length: 200 }, () => '*a').join(', ')}]\n`, server: /not valid YAML: Excessive alias count/, cli: /Excessive alias count/ },
  { name: 'aliases that decode to over 4 times the text', text: `${head}a: &a [${Array.from({ length: 500 }, (_, i) => `user${i}`).join(', ')}]\nspec: {b: [*a, *a, *a, *a, *a, *a]}\n`, server: /^the decoded request body is larger than \d+ bytes \(4 times/, cli: /decodes to more than 4 times its \d+ characters/ },
];

describe('the one YAML reader, on both sides', () => {
  for (const c of cases) {
    it(`${c.name}: refused by the server and by the loader, each in its words`, () => {
      const body = decodeYaml(c.text);
      expect('error' in body && body.error).toMatch(c.server);
      const { manifests, errors } = parseManifests(c.text, 'f.yaml');
      expect(manifests).toEqual([]);
      expect(errors.map((e) => `${e.file}:${e.line}:${e.column}: ${e.message}`)).toEqual([expect.stringMatching(c.cli)]);
    });
  }

  it('a key given twice: the server reports it in kube\'s words (fieldValidation decides), the loader refuses it', () => {
    const text = `${head}spec: {}\nkind: Team\n`;
    expect(decodeYaml(text)).toMatchObject({ duplicates: ['line 6: key "kind" already set in map'] });
    expect(parseManifests(text, 'f.yaml').errors).toEqual([{ file: 'f.yaml', line: 6, column: 1, message: 'Map keys must be unique' }]);
  });

  it('a well-formed manifest reads the same on both sides', () => {
    const text = `${head}spec:\n  users: &u [ana, bo]\n  access:\n  - {verbs: [get], users: *u}\n`;
    const body = decodeYaml(text);
    expect('value' in body && body.value).toEqual(parseManifests(text, 'f.yaml').manifests[0]!.object);
  });
});
