/**
 * Issue 40, point 8, through the built CLI on an embedded store: a key delivered to a `file:` sink
 * in --key-dir is announced once (it was written, and announced, twice: as --key-dir's
 * <name>.key and as the sink), and a pruned key's file left in --key-dir is named in the report.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { teamkeys } from '../support/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'teamkeys-key-files-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const keys = `apiVersion: management.service/v1
kind: OwnedAccessKey
metadata:
  name: filed
  annotations:
    gitops.management.service/key-secret: file:deploy.key
spec:
  user: bo
---
apiVersion: management.service/v1
kind: OwnedAccessKey
metadata:
  name: plain
spec:
  user: bo
`;

describe('key files in --key-dir, as the report tells them', () => {
  const source = join(dir, 'src');
  const keyDir = join(dir, 'keys');
  const apply = (...extra: string[]) => teamkeys(['apply', '--source', source, '--source-id', 'key-files', '--store', `sqlite:${join(dir, 'store.db')}`, '--key-dir', keyDir, ...extra]);

  it("a file: sink's key is written and announced once", () => {
    mkdirSync(source);
    writeFileSync(join(source, 'keys.yaml'), keys);
    const r = apply();
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.match(/deploy\.key|filed\.key/g)).toEqual(['deploy.key']);
    expect(r.stdout).toContain('    key delivered to file:deploy.key\n');
    expect(r.stdout).toContain(`    key written to ${join(keyDir, 'plain.key')}\n`);
    expect(readdirSync(keyDir).sort()).toEqual(['deploy.key', 'plain.key']);
  });

  it("a pruned key's file left in --key-dir is named, and said to work no more", () => {
    writeFileSync(join(source, 'keys.yaml'), 'apiVersion: management.service/v1\nkind: Team\nmetadata: {name: keep}\nspec: {users: [bo]}\n');
    const r = apply('--prune');
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`- OwnedAccessKey/plain -> Deleted\n    note: its key file ${join(keyDir, 'plain.key')} is left in place and no longer works: delete it\n`);
    expect(existsSync(join(keyDir, 'plain.key'))).toBe(true);
  });
});

