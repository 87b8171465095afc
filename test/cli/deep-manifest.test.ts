/**
 * Issue 33, path 9: the GitOps loader reads manifests with the one YAML reader the server reads
 * bodies with, so a manifest nested 1,000 deep is an error at its place, in the CLI's words, not
 * `Maximum call stack size exceeded`.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { teamkeys } from '../support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'teamkeys-deep-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('teamkeys validate on a deeply nested manifest', () => {
  it('a manifest holding [[[... 1,000 deep is file:line:col: nested more than 100 levels, exit 1', () => {
    mkdirSync(join(dir, 'teams'), { recursive: true });
    writeFileSync(join(dir, 'teams', 'deep.yaml'), `apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: deep\nspec:\n  users: ${'['.repeat(1000)}${']'.repeat(1000)}\n`);
    // Block nesting too: 150 mappings inside each other.
    const block = Array.from({ length: 150 }, (_, i) => `${'  '.repeat(i + 1)}a:`).join('\n');
    writeFileSync(join(dir, 'teams', 'block.yaml'), `apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: block\nspec:\n${block}\n${'  '.repeat(151)}x: 1\n`);
    const r = teamkeys(['validate', '--source', dir]);
    expect(r.code).toBe(1);
    const out = r.stdout + r.stderr;
    // The 101st bracket: column 9 is the first.
    expect(out).toContain('teams/deep.yaml:6:110: nested more than 100 levels');
    expect(out).toMatch(/teams\/block\.yaml:\d+:\d+: nested more than 100 levels/);
    expect(out).not.toMatch(/call stack/);
  });
});
