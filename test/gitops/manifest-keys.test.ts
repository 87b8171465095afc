import { describe, expect, it } from 'vitest';
import { parseManifests } from '../../src/gitops/source/manifests.js';

// A pull request's file is untrusted input: the loader's duplicate-key check must be linear (the
// yaml package's uniqueKeys took 20 s for a map of 40,000 keys; this test's default timeout is 5 s).
describe('duplicate keys in a manifest', () => {
  it('are an error at the repeated key, in a small file and in a map of 40,000 keys', () => {
    expect(parseManifests('apiVersion: management.service/v1\nkind: Team\nkind: Team\n', 'teams/a.yaml').errors).toEqual([
      { file: 'teams/a.yaml', line: 3, column: 1, message: 'Map keys must be unique' },
    ]);
    const big = `apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: x\nspec:\n${Array.from({ length: 40_000 }, (_, i) => `  k${i}: v`).join('\n')}\n  k7: again\n`;
    const r = parseManifests(big, 'teams/big.yaml');
    expect(r.manifests).toEqual([]);
    expect(r.errors).toEqual([{ file: 'teams/big.yaml', line: 40_006, column: 3, message: 'Map keys must be unique' }]);
  });

  it('in separate mappings or documents are not duplicates', () => {
    const r = parseManifests('a: {x: 1}\nb: {x: 2}\n---\na: 1\n', 'f.yaml');
    expect(r.errors).toEqual([]);
  });
});
