/**
 * A started sign-in's cookie is named by the start of its state. The callback's state is the
 * browser's to send (any text), and the route clears the cookie it names: only base64url characters
 * reach a Set-Cookie name, so `;` or `=` in a state cannot add attributes or cookies (found by a review).
 */
import { describe, expect, it } from 'vitest';
import { FieldCipher } from '../../src/api/field-cipher.js';
import { SealedStarts } from '../../src/signin/sealed-start.js';

describe('the cookie of a started sign-in', () => {
  const starts = new SealedStarts<{ n: number }>(FieldCipher.ephemeral(), 60_000);

  it("names no cookie with a callback state's other characters, and opens as before for the server's own states", () => {
    const cleared = starts.clear('abc;Domain=evil.example;x=1');
    expect(cleared.split(';')[0]).toMatch(/^teamkeys-signin-[A-Za-z0-9_-]+=$/);
    expect(cleared).not.toContain('evil.example');
    const state = 'Q2hvb3NlIGEgc3RhdGUgb2YgMzIgYnl0ZXM';
    const { setCookie } = starts.seal(state, { n: 7 }, true);
    expect(starts.open(state, setCookie.split(';')[0])).toEqual({ n: 7 });
    expect(starts.clear(state).split('=')[0]).toBe(setCookie.split('=')[0]);
  });
});
