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

  it('keeps neither the reported value, whatever its format, nor a key behind percent-encoding (a link inside a link)', () => {
    const old = 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8';
    expect(recordedSourceUrl(`https://paste.example/raw/${old}`, old)).toBe('https://paste.example/raw/[key removed]');
    // Not a value of the key format, not reported: nothing says it is a key, and the URL is kept.
    expect(recordedSourceUrl(`https://paste.example/raw/${old}`)).toBe(`https://paste.example/raw/${old}`);
    const key = generateKey();
    expect(recordedSourceUrl(`https://out.example/r?u=https%3A%2F%2Fgist.example%2Fraw%3Ftoken%3D${key}`)).toBe('https://out.example/r?u=https%3A%2F%2Fgist.example%2Fraw%3Ftoken%3D[key removed]');
    expect(recordedSourceUrl(`https://out.example/r?u=https%253A%252F%252Fx%253Ft%253D${key}%2526y`)).toBe('https://out.example/r?u=https%253A%252F%252Fx%253Ft%253D[key removed]%2526y');
    // Its letters percent-encoded: the value cannot be cut out of the text as given, so no URL is kept.
    const encoded = `%${key.charCodeAt(0).toString(16)}${key.slice(1)}`;
    expect(recordedSourceUrl(`https://paste.example/raw?t=${encoded}`)).toBeUndefined();
    expect(recordedSourceUrl(`https://paste.example/raw?a=%ZZ&t=${encoded}`)).toBeUndefined();
    // A short reported string that is no key value cuts nothing out.
    expect(recordedSourceUrl('https://paste.example/raw/abc', 'a')).toBe('https://paste.example/raw/abc');
  });
});
