/**
 * `teamkeys rotate --idempotency-key`: the command names its rotation, so running it again with the
 * same idempotency key (a script retrying after a lost answer) rotates no second time and says the
 * server-made value cannot be shown again; without the flag each run is a new rotation.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { teamkeys } from '../support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'teamkeys-rotate-idem-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('teamkeys rotate with an idempotency key', () => {
  it('the same --idempotency-key twice rotates once and the second run says the value cannot be shown again', () => {
    const store = `sqlite:${join(dir, 'db.sqlite')}`;
    writeFileSync(join(dir, 'k.yaml'), 'apiVersion: management.service/v1\nkind: OwnedAccessKey\nmetadata:\n  name: ci\nspec:\n  user: ana\n');
    expect(teamkeys(['create', '-f', join(dir, 'k.yaml'), '--store', store], { cwd: dir }).code).toBe(0);
    const rotation = () => (JSON.parse(teamkeys(['get', 'ownedaccesskey', 'ci', '--store', store, '-o', 'json'], { cwd: dir }).stdout) as { metadata: { resourceVersion: string }; status: { rotation: { idempotencyKey?: string } } });

    const first = teamkeys(['rotate', 'ci', '--await-confirmation', '--idempotency-key', 'nightly-42', '--store', store], { cwd: dir });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/^tk_[0-9A-Za-z]{49}\n$/);
    const after = rotation();
    expect(after.status.rotation.idempotencyKey).toBe('nightly-42');

    const again = teamkeys(['rotate', 'ci', '--await-confirmation', '--idempotency-key', 'nightly-42', '--store', store], { cwd: dir });
    expect(again.code).toBe(1);
    expect(again.stdout).toBe('');
    expect(again.stderr).toContain('rotated (idempotency key nightly-42), but the answer with the new value was lost, and a value the server generated cannot be shown again');
    expect(again.stderr).toContain('run teamkeys rotate ci again');
    expect(rotation().metadata.resourceVersion).toBe(after.metadata.resourceVersion);

    // Without the flag, each run is its own rotation.
    const fresh = teamkeys(['rotate', 'ci', '--await-confirmation', '--store', store], { cwd: dir });
    expect(fresh.code, fresh.stderr).toBe(0);
    expect(fresh.stdout.trim()).not.toBe(first.stdout.trim());
    expect(rotation().status.rotation.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);
  });
});
