/**
 * The source URL a reporter gives is kept in the audit trail and the log: one holding a key value
 * (a raw file's link with the key in its query, the reported key or another) keeps it no more, the
 * value replaced (found by a review).
 */
import { describe, expect, it } from 'vitest';
import { generateKey } from '../../src/api/key-format.js';
import { recordedSourceUrl } from '../../src/server/leaks/leaked-keys.js';

describe("a leak report's source URL", () => {
  it('keeps no key value, and is otherwise kept as given (http and https only)', () => {
    const key = generateKey();
    expect(recordedSourceUrl(`https://gist.example/raw?token=${key}&x=1`)).toBe('https://gist.example/raw?token=[key removed]&x=1');
    expect(recordedSourceUrl('https://github.com/acme/app/blob/main/.env#L3')).toBe('https://github.com/acme/app/blob/main/.env#L3');
    expect(recordedSourceUrl('javascript:alert(1)')).toBeUndefined();
  });
});
