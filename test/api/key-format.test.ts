/**
 * The recognisable key format (src/api/key-format.ts): CRC-32 against published vectors, every
 * generated value in the format, and the checksum rejecting random strings of the same shape.
 */
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { crc32 } from '../../src/api/crc32.js';
import { base62Alphabet, generateKey, isAcceptedKeyValue, isFormattedKey, keyChecksum, keyPrefix, keyRandomLength } from '../../src/api/key-format.js';

describe('crc32', () => {
  it.each([
    ['', 0x00000000],
    ['a', 0xe8b7be43],
    ['abc', 0x352441c2],
    ['123456789', 0xcbf43926],
    ['The quick brown fox jumps over the lazy dog', 0x414fa339],
  ])('crc32(%j) is the IEEE check value', (input, expected) => {
    expect(crc32(input)).toBe(expected);
    expect(crc32(Buffer.from(input))).toBe(expected);
  });

  it('a non-ASCII string is taken as its UTF-8 bytes', () => {
    expect(crc32('é')).toBe(crc32(Buffer.from([0xc3, 0xa9])));
  });
});

describe('the key format', () => {
  it('a generated key is tk_, 43 random base62 characters and the base62 CRC-32 of what precedes it', () => {
    const keys = Array.from({ length: 200 }, generateKey);
    for (const key of keys) {
      expect(key).toMatch(/^tk_[0-9A-Za-z]{49}$/);
      expect(isFormattedKey(key)).toBe(true);
      const body = key.slice(0, -6);
      expect(key.slice(-6)).toBe(keyChecksum(body));
    }
    expect(new Set(keys).size).toBe(keys.length);
    // 43 x log2(62) = 256.03: at least 256 bits of randomness.
    expect(keyRandomLength * Math.log2(62)).toBeGreaterThanOrEqual(256);
  });

  it('the checksum is six base62 characters of the CRC-32, left-padded with 0', () => {
    expect(keyChecksum('')).toBe('000000');
    // 0xcbf43926 = 3421780262 = 3*62^5 + ... written in 0-9A-Za-z
    let n = 0;
    for (const c of keyChecksum('123456789')) n = n * 62 + base62Alphabet.indexOf(c);
    expect(n).toBe(0xcbf43926);
  });

  it('one changed character fails the checksum', () => {
    const key = generateKey();
    for (let i = keyPrefix.length; i < key.length; i++) {
      const c = key[i] === 'A' ? 'B' : 'A';
      expect(isFormattedKey(key.slice(0, i) + c + key.slice(i + 1))).toBe(false);
    }
  });

  it('values of the old format are still accepted; a tk_ value with a bad checksum is not', () => {
    expect(isAcceptedKeyValue(`Old${'k'.repeat(61)}`)).toBe(true);
    expect(isAcceptedKeyValue('a'.repeat(32))).toBe(true);
    expect(isAcceptedKeyValue('a'.repeat(31))).toBe(false);
    const key = generateKey();
    expect(isAcceptedKeyValue(key)).toBe(true);
    expect(isAcceptedKeyValue(`${key.slice(0, -1)}${key.endsWith('0') ? '1' : '0'}`)).toBe(false);
    expect(isAcceptedKeyValue(`tk_${'a'.repeat(60)}`)).toBe(false);
  });

  it('the checksum rejects 1,000,000 random strings of the same shape (bounded)', () => {
    // Random tk_ + 49 base62 strings: a 6-character checksum matches by chance with probability
    // about 2e-11, so over a million about 2e-5 match: a run may meet one by luck, never several
    // (a checksum ignored would accept every one). Bytes come from the CSPRNG in bulk; the loop
    // stops at 60 s on a very slow machine, having checked what it reached.
    const total = 1_000_000;
    const deadline = Date.now() + 60_000;
    const shapeLength = keyRandomLength + 6;
    let checked = 0;
    let accepted = 0;
    while (checked < total && Date.now() < deadline) {
      const bytes = randomBytes(shapeLength * 10_000);
      for (let i = 0; i < bytes.length; i++) bytes[i] = base62Alphabet.charCodeAt(bytes[i]! % 62);
      for (let k = 0; k < 10_000; k++) {
        if (isFormattedKey(keyPrefix + bytes.toString('latin1', k * shapeLength, (k + 1) * shapeLength))) accepted++;
        checked++;
      }
    }
    expect(accepted).toBeLessThanOrEqual(2);
    expect(checked).toBeGreaterThanOrEqual(100_000);
  });

  it('property: a random string in the format shape is refused unless its checksum matches', () => {
    const body = fc.string({ unit: fc.constantFrom(...base62Alphabet), minLength: keyRandomLength + 6, maxLength: keyRandomLength + 6 });
    fc.assert(
      fc.property(body, (b) => isFormattedKey(`${keyPrefix}${b}`) === (keyChecksum(`${keyPrefix}${b.slice(0, -6)}`) === b.slice(-6))),
      { numRuns: 2000, interruptAfterTimeLimit: 10_000, ...(process.env.TEAMKEYS_TEST_SEED ? { seed: Number(process.env.TEAMKEYS_TEST_SEED) } : {}) },
    );
  });
});
