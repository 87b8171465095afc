/**
 * review-ops: a manifest author picks the file: path. docs/keys.md: "a relative path starts at the
 * key folder (--key-dir)". But `..` walks out of it, and an absolute path goes anywhere the
 * reconciler's user may write (its own store, encryption key, TLS key, ~/.ssh/authorized_keys,
 * /etc/cron.d when root): the file there is replaced by a key value.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sinkFile, writeSink } from '../../src/gitops/keys/file-sink.js';
import { validateSource } from '../../src/gitops/reconcile.js';
import { parseSecretTarget, type FileSink } from '../../src/gitops/keys/sinks.js';

const file = (path: string) => parseSecretTarget(`file:${path}`) as FileSink;
const value = `V${'a1'.repeat(32)}`;

describe('file: sinks stay inside --key-dir', () => {
  const root = mkdtempSync(join(tmpdir(), 'review-ops-sink-'));
  const keyDir = join(root, 'keys');
  mkdirSync(keyDir);
  // Stands for the daemon's own state: .teamkeys/encryption.key, the store, TLS key, ...
  const victim = join(root, 'state', 'encryption.key');
  mkdirSync(join(root, 'state'));

  it('a relative path with .. does not leave the key folder', async () => {
    writeFileSync(victim, 'the real encryption key\n');
    await expect(sinkFile(file('../state/encryption.key'), { base: keyDir })).rejects.toThrow();
    await writeSink(file('../state/encryption.key'), value, { base: keyDir }).catch(() => undefined);
    expect(readFileSync(victim, 'utf8')).toBe('the real encryption key\n');
  });

  it('an absolute path outside the key folder is refused', async () => {
    writeFileSync(victim, 'the real encryption key\n');
    await writeSink(file(victim), value, { base: keyDir }).catch(() => undefined);
    expect(readFileSync(victim, 'utf8')).toBe('the real encryption key\n');
  });

  it('a link as a folder above the file is refused too, not only as its own folder (docs/keys.md: "a link as the folder is refused")', async () => {
    const elsewhere = join(root, 'elsewhere');
    mkdirSync(join(elsewhere, 'deep'), { recursive: true });
    symlinkSync(elsewhere, join(keyDir, 'link'));
    await writeSink(file('link/deep/x.key'), value, { base: keyDir }).catch(() => undefined);
    expect(existsSync(join(elsewhere, 'deep', 'x.key'))).toBe(false);
  });

  it('validate refuses .. and absolute paths at the annotation\'s file:line:col', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sink-validate-'));
    const key = (name: string, sink: string) => `apiVersion: management.service/v1\nkind: OwnedAccessKey\nmetadata:\n  name: ${name}\n  annotations:\n    gitops.management.service/key-secret: ${JSON.stringify(sink)}\nspec:\n  user: ci-bot\n`;
    writeFileSync(join(dir, 'keys.yaml'), [key('up', 'file:../state/encryption.key'), key('abs', 'file:/etc/cron.d/x'), key('ok', 'file:ci/deploy.key')].join('---\n'));
    const errors = (await validateSource({ source: dir, sourceId: 'x' }, 'management.service/v1')).report.errors.map((e) => `${e.file}:${e.line}:${e.column}: ${e.message}`);
    expect(errors).toEqual([
      'keys.yaml:6:43: gitops.management.service/key-secret file:../state/encryption.key holds "..": a file: path stays inside the key folder (--key-dir)',
      'keys.yaml:15:43: gitops.management.service/key-secret file:/etc/cron.d/x is absolute: a file: path is relative to the key folder (--key-dir)',
    ]);
  });

  it('a sink outside the key folder is refused before the key is rotated', async () => {
    await expect(sinkFile(file('link/deep/x.key'), { base: keyDir })).rejects.toThrow(/outside the key folder/);
  });
});
