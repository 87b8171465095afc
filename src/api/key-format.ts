/**
 * The recognisable key format every new key value has (docs/keys.md, "The key format"):
 * `tk_` + 43 random characters of base62 (43 x log2(62) = 256.03 bits) + 6 characters of checksum,
 * the CRC-32 (IEEE) of everything before it in base62 (`0-9A-Za-z`), left-padded with `0`, as
 * GitHub's own tokens carry it. A scanner finds such a value by its prefix and shape and confirms
 * it offline by the checksum, so it reports no random string. Keys made before this format (32 to
 * 256 characters of `[A-Za-z0-9]`) keep working. This module is the one generator: every path
 * that mints a value (create, rotation, scheduled rotation, sign-in) takes it from here.
 */
import { randomInt } from 'node:crypto';
import { crc32 } from './crc32.js';

/** Names teamkeys; the `_` keeps it apart from any value of the old format. */
export const keyPrefix = 'tk_';
export const base62Alphabet = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** Random characters in a value: at least 256 bits. */
export const keyRandomLength = 43;
export const keyChecksumLength = 6;
/** A value in the format is always this long (52). */
export const formattedKeyLength = keyPrefix.length + keyRandomLength + keyChecksumLength;

/** The shape of a value in the format (checksum not yet checked), as a regular expression source a scanner can use. */
export const keyFormatSource = `tk_[0-9A-Za-z]{${keyRandomLength + keyChecksumLength}}`;
const formatShape = new RegExp(`^${keyFormatSource}$`);

/**
 * The values the API takes as spec.key and as a bearer key: one in the format, or the old format's
 * 32 to 256 characters of `[A-Za-z0-9]`. The schema's spec.key pattern says the same.
 */
const acceptedShape = new RegExp(`^(?:${keyFormatSource}|[A-Za-z0-9]{32,256})$`);

/** `n` in base62, left-padded with `0` to six characters (2^32 < 62^6). */
function base62(n: number): string {
  let s = '';
  do {
    s = base62Alphabet[n % 62]! + s;
    n = Math.floor(n / 62);
  } while (n > 0);
  return s.padStart(keyChecksumLength, '0');
}

/** The checksum a value in the format ends with: the CRC-32 of `body` (everything before it) in base62. */
export function keyChecksum(body: string): string {
  return base62(crc32(body));
}

/** A new access key value, in the format, from the CSPRNG. */
export function generateKey(): string {
  let body = keyPrefix;
  for (let i = 0; i < keyRandomLength; i++) body += base62Alphabet[randomInt(62)];
  return body + keyChecksum(body);
}

/** Whether `value` is a key in the format: prefix, shape and a checksum that matches. */
export function isFormattedKey(value: string): boolean {
  if (!formatShape.test(value)) return false;
  const cut = value.length - keyChecksumLength;
  return keyChecksum(value.slice(0, cut)) === value.slice(cut);
}

/**
 * Whether `value` may be a key value: the format (checksum included: a `tk_` value that fails it
 * was mistyped or made up, and is refused without a look at the store) or the old format.
 */
export function isAcceptedKeyValue(value: string): boolean {
  if (!acceptedShape.test(value)) return false;
  return !value.startsWith(keyPrefix) || isFormattedKey(value);
}

/** What a refused spec.key is told (never its value). */
export const keyValueRule = `must be a key in the format ${keyPrefix}... (${formattedKeyLength} characters with a valid checksum) or 32 to 256 characters of [A-Za-z0-9]`;
