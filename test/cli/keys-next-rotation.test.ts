/**
 * Issue 40, point 8: `teamkeys keys` says when a key's scheduled rotation (rotate-every, as the
 * reconciler applied it) is next due; a key without a schedule shows none.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { teamkeys } from '../support/cli.js';
import { monthlyKeyYaml } from '../support/manifests.js';

const dir = mkdtempSync(join(tmpdir(), 'teamkeys-keys-next-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('teamkeys keys and scheduled rotation', () => {
  it('shows when a scheduled rotation is next due: the value set time plus rotate-every', () => {
    const store = `sqlite:${join(dir, 'store.db')}`;
    const file = join(dir, 'keys.yaml');
    writeFileSync(file, `${monthlyKeyYaml({ name: 'monthly' })}---
apiVersion: management.service/v1
kind: OwnedAccessKey
metadata:
  name: unscheduled
spec:
  user: ci-bot
`);
    expect(teamkeys(['create', '-f', file, '--store', store]).code).toBe(0);
    const json = teamkeys(['keys', '--store', store, '-o', 'json']);
    expect(json.code, json.stderr).toBe(0);
    const rows = JSON.parse(json.stdout) as { name: string; createdAt: string; nextRotationAt: string | null }[];
    const monthly = rows.find((r) => r.name === 'monthly')!;
    expect(Date.parse(monthly.nextRotationAt!) - Date.parse(monthly.createdAt)).toBe(30 * 86_400_000);
    expect(rows.find((r) => r.name === 'unscheduled')!.nextRotationAt).toBeNull();
    const table = teamkeys(['keys', '--store', store]);
    expect(table.stdout.split('\n')[0]).toMatch(/NEXT ROTATION$/);
    expect(table.stdout).toMatch(new RegExp(`^monthly\\s.*${monthly.nextRotationAt}$`, 'm'));
  });
});
