/**
 * The suite shares each worker's module graph between test files (vitest.config.ts, isolate: false),
 * and a module mock cannot reach a module an earlier file already loaded: its counts stay at zero and
 * its stand-in never runs. So every file that mocks a module must be in the config's list of files
 * run isolated, and that list names only files that still mock one.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mockingFiles } from '../../vitest.config.js';

const root = join(import.meta.dirname, '../..');
const mocks = /\bvi\s*\.\s*(mock|doMock|unmock|doUnmock|importMock)\s*\(/;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return e.name.endsWith('.ts') ? [relative(root, path)] : [];
  });
}

describe('the test files run isolated', () => {
  const all = sources(join(root, 'test'));
  const files = all.filter((f) => f.endsWith('.test.ts'));
  const mocking = all.filter((f) => mocks.test(readFileSync(join(root, f), 'utf8')));

  it('include every file that mocks a module', () => {
    expect(mocking.length).toBeGreaterThan(0);
    expect(mocking.filter((f) => !mockingFiles.includes(f)), 'add these to mockingFiles in vitest.config.ts').toEqual([]);
  });

  it('mock in the test file itself: a helper that mocks would mock for whichever file imports it', () => {
    expect(mocking.filter((f) => !f.endsWith('.test.ts'))).toEqual([]);
  });

  it('are only files that mock a module', () => {
    for (const f of mockingFiles) {
      expect(files, `${f} is in mockingFiles but is not a test file`).toContain(f);
      expect(mocks.test(readFileSync(join(root, f), 'utf8')), `${f} mocks no module: take it out of mockingFiles`).toBe(true);
    }
  });
});
