/**
 * The field managers the server writes with are reserved (api/key-notices.ts): no request through
 * the API may write under one. This reads the sources for every manager name the server writes
 * with (a `fieldManager: '...'` or a `...Manager = '...'` constant of the server's, `teamkeys-...`),
 * so a new server writer cannot be left out of the reserved set.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { serverFieldManagers } from '../../src/api/key-notices.js';
import { root } from '../support/cli.js';

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith('.ts') ? [path] : [];
  });
}

describe("the server's own field managers", () => {
  it('every teamkeys-... manager the server writes with is reserved', () => {
    const named = new Set<string>();
    for (const file of sources(join(root, 'src'))) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/(?:fieldManager: |Manager = )'(teamkeys-[a-z-]+)'/g)) named.add(m[1]!);
    }
    expect(named.size).toBeGreaterThanOrEqual(8);
    expect([...named].filter((m) => !serverFieldManagers.has(m))).toEqual([]);
  });
});
