/**
 * The opaque `continue` token of a paged list: the revision the list is read at and the last key,
 * sealed (AES-GCM under the store's encryption key, the one every replica shares). A reader who sees
 * only some objects may get a page that ends at the last object examined, which it may not see:
 * in plain base64 JSON the token named it, and a hand-made token placed the page anywhere, so a
 * restricted reader could spell out hidden keys' names (found by a review at stop 64). Sealed, the
 * token says nothing and only the server makes one; the key is padded, so its length says nothing.
 */
import { badRequest } from '../api/errors.js';
import type { FieldCipher } from '../api/field-cipher.js';

/** The revision of a token that goes on at the current state (kube's -1), handed out with a 410. */
export const latest = -1;

const version = 'teamkeys/v2';
/** Store keys are `/<plural>/<name>`, a name at most 253 characters: every one fits, padded to this. */
const paddedLength = 288;
const context = 'teamkeys continue token v2';

interface Token {
  v: typeof version;
  rv: number;
  /** The last key, padded with NULs (no key holds one), sealed. */
  s: string;
}

export function encodeContinue(cipher: FieldCipher, revision: number, after: string): string {
  const token: Token = { v: version, rv: revision, s: cipher.sealFixed(after.padEnd(paddedLength, '\0'), `${context} ${revision}`) };
  return Buffer.from(JSON.stringify(token)).toString('base64url');
}

/** Where a token goes on: its revision (undefined: the current state) and the last key it returned. */
export function decodeContinue(cipher: FieldCipher, token: string, prefix: string): { revision: number | undefined; after: string } {
  const invalid = (why: string) => badRequest(`continue key is not valid: ${why}`);
  if (!/^[A-Za-z0-9_-]+={0,2}$/.test(token)) throw invalid('not a base64 token');
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw invalid('not a token this server issued');
  }
  const t = parsed as Omit<Partial<Token>, 'v'> & { v?: unknown };
  if (t?.v === 'teamkeys/v1') throw invalid('a token of an earlier version of this server: start the list again');
  if (t?.v !== version || typeof t.s !== 'string' || !Number.isSafeInteger(t.rv) || t.rv! < latest) throw invalid('not a token this server issued');
  let after: string;
  try {
    // The revision is bound to the key (GCM's additional data): a token's revision cannot be swapped.
    after = cipher.open(t.s, `${context} ${t.rv}`).replace(/\0+$/, '');
  } catch {
    throw invalid('not a token this server issued');
  }
  if (!after.startsWith(prefix)) throw invalid('the token belongs to another resource');
  return { revision: t.rv === latest ? undefined : t.rv!, after };
}
