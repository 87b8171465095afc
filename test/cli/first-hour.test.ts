/**
 * The messages a newcomer reads first: an empty source is an error that says where nothing was
 * found, validate says how much it checked, plan names the source id it uses, and validate's
 * help lists only the flags validate reads.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { root, teamkeys } from '../support/cli.js';

describe('first messages', () => {
  const dir = mkdtempSync(join(tmpdir(), 'teamkeys-first-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const examples = join(root, 'examples/gitops');

  it('an empty source is an error naming the folder, for validate, plan and apply alike', () => {
    writeFileSync(join(dir, 'README.txt'), 'not a manifest');
    writeFileSync(join(dir, 'comments.yaml'), '# only a comment\n');
    const v = teamkeys(['validate', '--source', dir]);
    expect(v.code).toBe(1);
    expect(v.stderr.trim()).toBe(`error: no manifests found in ${dir}: nothing to validate (files ending .yaml, .yml or .json, searched recursively)`);
    expect(v.stdout).toBe('');
    for (const mode of ['plan', 'apply']) {
      const r = teamkeys([mode, '--source', dir, '--store', 'memory:']);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`error: no manifests found in ${dir}: nothing to ${mode}`);
      expect(r.stderr).toContain('--allow-empty accepts an empty source');
    }
    expect(teamkeys(['plan', '--source', dir, '--store', 'memory:', '--allow-empty']).code).toBe(0);
  });

  it('validate states how many objects of each kind it checked, and from which source', () => {
    const r = teamkeys(['validate', '--source', examples, '--source-id', 'examples']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`The manifests are valid: checked 5 objects (2 OwnedAccessKeys, 3 Teams) from source examples (${examples}).\n`);
    const one = teamkeys(['validate', join(examples, 'teams/auditors.yaml')]);
    expect(one.stdout).toBe(`The manifests are valid: checked 1 object (1 Team) from ${join(examples, 'teams/auditors.yaml')}.\n`);
  });

  it('plan text starts with the source id it uses (the one pruning goes by) and the target', () => {
    const r = teamkeys(['plan', '--source', examples, '--source-id', 'platform-teams', '--store', 'memory:']);
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(new RegExp(`^Source platform-teams \\(${examples}( at [0-9a-f]{12})?\\) -> memory:$`));
  });

  it('validate --help lists only the flags validate reads', () => {
    const help = teamkeys(['validate', '--help']).stdout;
    for (const flag of ['--source', '--ref', '--path', '--source-id', '--api-group', '--report-dir', '--output']) expect(help).toContain(flag);
    for (const flag of ['--store', '--server', '--token-file', '--ca-file', '--prune', '--allow-empty', '--max-prune', '--concurrency', '--key-dir', '--detailed-exitcode']) {
      // Not listed as a flag (another flag's help may still mention it).
      expect(help).not.toMatch(new RegExp(`^\\s+${flag}\\b`, 'm'));
    }
    expect(teamkeys(['plan', '--help']).stdout).toContain('--server');
  });
});
