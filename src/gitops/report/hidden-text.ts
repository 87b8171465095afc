/**
 * Characters a reviewer cannot see, or cannot tell from others: controls (C0, DEL, C1), bidi
 * overrides and isolates (which reorder what is shown: `["carla"]` can read as anything), zero-width
 * and other invisible characters, and letters of another script inside a Latin word (`cаrla` with
 * a Cyrillic а). Every report form shows them as `\uXXXX` escapes and lists the texts holding them,
 * so `["carla"] -> ["carla","cаrla","carla​"]` reads as the three different names it is.
 */

// eslint-disable-next-line no-control-regex
const hidden = /[\u0000-\u001f\u007f-\u009f\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff9-\ufffb]|\udb40[\udc00-\udfff]/g;

/** Scripts whose letters pass for Latin ones (Unicode's confusables are mostly among these). */
const lookAlike = /[\p{Script=Cyrillic}\p{Script=Greek}\p{Script=Armenian}\p{Script=Cherokee}\p{Script=Coptic}]/u;
const latin = /\p{Script=Latin}/u;
/** A word: a run of letters, digits and marks (names join words with `-`, `.`, `_`). */
const word = /[\p{L}\p{M}\p{N}]+/gu;

/** Most text (names, paths, JSON) is printable ASCII: nothing in it to look for. */
const printableAscii = /^[\x20-\x7e]*$/;

const escapeUnits = (c: string) => [...Array(c.length).keys()].map((i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`).join('');

/** Whether one word mixes Latin letters with look-alike letters of another script. */
const mixedWord = (w: string) => latin.test(w) && lookAlike.test(w);

/**
 * Whether a text holds a hidden character or a word mixing scripts. A tab or a newline (a
 * description written over lines) is shown escaped but not flagged: it hides nothing.
 */
export function isSuspicious(text: string): boolean {
  if (printableAscii.test(text)) return false;
  hidden.lastIndex = 0;
  if (hidden.test(text.replace(/[\t\n]/g, ''))) return true;
  return (text.match(word) ?? []).some(mixedWord);
}

/**
 * The text with hidden characters, and the non-ASCII letters of a mixed-script word, as `\uXXXX`
 * (UTF-16 units, so the result is also valid inside a JSON string). Other text is unchanged: a
 * name written wholly in Cyrillic, or with accents, is shown as written.
 */
export function visible(text: string): string {
  if (printableAscii.test(text)) return text;
  const shown = text.replace(hidden, escapeUnits);
  return shown.replace(word, (w) => (mixedWord(w) ? w.replace(/[^\x00-\x7f]/gu, escapeUnits) : w));
}

/** Every distinct text (keys too) anywhere in a value that holds what `isSuspicious` finds, in order of appearance. */
export function suspiciousTexts(value: unknown, found: Set<string> = new Set()): Set<string> {
  if (typeof value === 'string') {
    if (isSuspicious(value)) found.add(value);
  } else if (Array.isArray(value)) {
    for (const v of value) suspiciousTexts(v, found);
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      suspiciousTexts(k, found);
      suspiciousTexts(v, found);
    }
  }
  return found;
}
