/**
 * Finds key values in the format (key-format.ts) in text: prefix, shape and a matching checksum,
 * so a scanner reports no random string. Each finding has its line and column (1-based); its value
 * is for hashing and lookups only, never for printing.
 */
import { isFormattedKey, keyFormatSource } from './key-format.js';

export interface FoundKey {
  line: number;
  column: number;
  /** The value itself: never printed, logged or reported. */
  value: string;
}

/** Not part of a longer word: a `tk_` run inside a longer identifier is not a key. */
const candidate = new RegExp(`(?<![0-9A-Za-z_])${keyFormatSource}(?![0-9A-Za-z_])`, 'g');

/** Every key value in the format that `text` holds, in order. */
export function findKeys(text: string): FoundKey[] {
  const found: FoundKey[] = [];
  let line = 1;
  let lineStart = 0;
  let scanned = 0;
  for (const m of text.matchAll(candidate)) {
    if (!isFormattedKey(m[0])) continue;
    for (let i = text.indexOf('\n', scanned); i !== -1 && i < m.index; i = text.indexOf('\n', i + 1)) {
      line++;
      lineStart = i + 1;
    }
    scanned = m.index;
    found.push({ line, column: m.index - lineStart + 1, value: m[0] });
  }
  return found;
}

/** What a file holding a key is told (after `file:line:col: `), never the value. */
export const keyInFileMessage = 'holds an access key value (teamkeys format; the value is not shown): a key must never be kept in git. Revoke it (POST /auth/revoke or teamkeys rotate), then remove it from the file and its history';
