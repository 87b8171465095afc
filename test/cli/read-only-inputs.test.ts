/**
 * review-ops: the review and key listing CLI's inputs.
 * - `--since` with a file that says it is a review but is not one inside crashes with an
 *   "unexpected" TypeError instead of a file:line:col refusal (docs/keys.md: "A file that is not a
 *   review is refused with its position ... exit code 1").
 * - `--store sqlite:TYPO` makes an empty store and reports "0 Teams, 0 keys, 0 identities", exit 0:
 *   audit evidence that nobody may do anything. The default store is refused when missing; a named
 *   one should be too for these read-only commands.
 */
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { teamkeys } from '../support/cli.js';

describe('access-review and keys inputs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'review-ops-cli-'));

  it('--since with malformed identities is refused with a clear message, not an unexpected error', () => {
    const cases = {
      'null-identity.json': '{"kind":"AccessReview","version":1,"generatedAt":"2026-01-01T00:00:00Z","identities":[null]}',
      'no-keys.json': '{"kind":"AccessReview","version":1,"generatedAt":"2026-01-01T00:00:00Z","identities":[{"id":"user:x","kind":"user","name":"x","memberOf":[],"roles":[],"grants":[],"keys":null}]}',
      'bad-time.json': '{"kind":"AccessReview","version":1,"generatedAt":5,"identities":[]}',
    };
    for (const [name, text] of Object.entries(cases)) {
      writeFileSync(join(dir, name), text);
      const r = teamkeys(['access-review', '--store', `sqlite:${join(dir, 'store.db')}`, '--since', join(dir, name)], { cwd: dir });
      expect(r.code, name).toBe(1);
      expect(r.stderr, name).not.toContain('unexpected');
      expect(r.stderr, name).toContain(name);
    }
    // Where the misfit is, as file:line:col and the path of the value.
    const r = teamkeys(['access-review', '--store', `sqlite:${join(dir, 'store.db')}`, '--since', join(dir, 'no-keys.json')], { cwd: dir });
    expect(r.stderr).toContain(`${join(dir, 'no-keys.json')}:1:171: identities[0].keys: "keys" must be a list`);
  });

  it('a --store that does not exist is refused, not reviewed as an empty installation', () => {
    const typo = join(dir, 'teamkey.db');
    const review = teamkeys(['access-review', '--store', `sqlite:${typo}`], { cwd: dir });
    expect(review.code).toBe(1);
    expect(review.stderr).toContain(`the store ${typo} does not exist: access-review only reads`);
    expect(existsSync(typo)).toBe(false);
    const keys = teamkeys(['keys', '--store', `sqlite:${typo}`], { cwd: dir });
    expect(keys.code).toBe(1);
  });
});
