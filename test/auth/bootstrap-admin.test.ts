/**
 * The first administrator (src/auth/bootstrap.ts), as `teamkeys serve` makes it on an empty store:
 * the generated key written to its file (the folder made, one line, owner-only), two replicas
 * bootstrapping the same store at once (one makes it, the other is told it was made), and a failure
 * that is not that race reported, not hidden.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bootstrapAdmin } from '../../src/auth/bootstrap.js';
import { hashKey } from '../../src/api/secrets.js';
import { newRegistry } from '../registry/helpers.js';

describe('bootstrapping the first administrator', () => {
  const dir = mkdtempSync(join(tmpdir(), 'teamkeys-bootstrap-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('writes the generated key, one line, to a file only its owner reads, making the folders it needs', async () => {
    const { registry } = newRegistry();
    const keyFile = join(dir, 'state', 'nested', 'admin.key');
    expect(await bootstrapAdmin(registry, { keyFile })).toEqual({ created: true, keyFile });
    const text = readFileSync(keyFile, 'utf8');
    expect(text).toMatch(/^\S{32,}\n$/);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    // The line is the admin key's value.
    const found = await registry.ownedaccesskeys.findByIndex(hashKey(text.trim()));
    expect(found.items.map((k) => k.metadata.name)).toEqual(['admin']);
  });

  it('two replicas bootstrapping one empty store at once: one makes the administrator, the other is told it exists', async () => {
    const { registry } = newRegistry();
    const adminKey = `Bootstrap${'b'.repeat(50)}`;
    const results = await Promise.all([1, 2].map(() => bootstrapAdmin(registry, { adminKey, keyFile: join(dir, 'unused.key') })));
    expect(results.map((r) => r.created).sort()).toEqual([false, true]);
    expect(results).toContainEqual({ created: false });
    expect((await registry.teams.list()).items.map((t) => t.metadata.name)).toEqual(['admins']);
  });

  it('a failure other than that race is reported, not taken for it', async () => {
    const { registry } = newRegistry();
    await expect(bootstrapAdmin(registry, { adminKey: 'short', keyFile: join(dir, 'unused.key') })).rejects.toMatchObject({ code: 422 });
  });
});
