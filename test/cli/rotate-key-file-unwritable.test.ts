/**
 * review-ops: `teamkeys rotate --key-file PATH` checks only that PATH's folder exists, then rotates
 * (default --overlap 0: the old value dies at once), then writes. A folder that exists but cannot
 * be written (permissions, read-only mount, full disk; /proc here, which even root cannot write)
 * loses the new value after the old one is dead: the key works for nobody.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { teamkeys } from '../support/cli.js';

describe('teamkeys rotate --key-file', () => {
  it('a key file that cannot be written leaves the key unrotated (or awaiting confirmation), not without a working value', () => {
    const dir = mkdtempSync(join(tmpdir(), 'review-ops-rotate-'));
    const store = `sqlite:${join(dir, 'db.sqlite')}`;
    writeFileSync(join(dir, 'k.yaml'), 'apiVersion: management.service/v1\nkind: OwnedAccessKey\nmetadata:\n  name: ci\nspec:\n  user: ana\n');
    expect(teamkeys(['create', '-f', join(dir, 'k.yaml'), '--store', store], { cwd: dir }).code).toBe(0);
    const r = teamkeys(['rotate', 'ci', '--store', store, '--key-file', '/proc/ci.key'], { cwd: dir });
    expect(r.code).toBe(1);
    const rows = JSON.parse(teamkeys(['keys', '--store', store, '-o', 'json'], { cwd: dir }).stdout) as { name: string; rotation: { state: string } }[];
    expect(['none', 'awaiting-delivery']).toContain(rows.find((k) => k.name === 'ci')!.rotation.state);
  });
});
