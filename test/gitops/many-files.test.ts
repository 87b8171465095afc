/**
 * Issue 42, point 9 (the open-file part): a source of 1,500 manifest files is read under
 * `ulimit -n 1024` (a common default), where opening them all at once failed with EMFILE.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bin } from '../support/cli.js';

describe('a source of many files', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'teamkeys-many-files-'));
    mkdirSync(join(dir, 'teams'));
    for (let i = 0; i < 1500; i++) writeFileSync(join(dir, 'teams', `team-${i}.yaml`), `apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: team-${i}\n`);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('1,500 manifest files validate under ulimit -n 1024', () => {
    const r = spawnSync('bash', ['-c', 'ulimit -n 1024 && exec "$0" "$1" validate --source "$2"', process.execPath, bin, join(dir, 'teams')], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, TEAMKEYS_STORE: '' } });
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('The manifests are valid: checked 1500 objects (1500 Teams)');
    expect(r.status).toBe(0);
  });
});
