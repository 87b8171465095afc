/**
 * Scans of JSON text done before (or instead of) parsing it: the nesting depth and the number of
 * members, so that a body V8 would take long to parse is refused unparsed. The text may be
 * malformed; JSON.parse judges that afterwards.
 */

/**
 * Where the string opening at `start` closes: its next quote not escaped by an odd run of
 * backslashes. indexOf skips the text between (a 2 MB body of long strings in a few ms, where a
 * loop over each character took 50 ms).
 */
export function stringEnd(text: string, start: number): number {
  for (let from = start + 1; ; ) {
    const q = text.indexOf('"', from);
    if (q < 0) return text.length;
    let b = q - 1;
    while (b > start && text.charCodeAt(b) === 0x5c) b--;
    if ((q - 1 - b) % 2 === 0) return q;
    from = q + 1;
  }
}

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/**
 * The members of JSON text (object fields and array items, at any depth, as measureDecoded counts
 * them), or 'deep' past `maxDepth` nested arrays and objects: one pass, strings skipped.
 */
export function jsonShape(text: string, maxDepth: number): number | 'deep' {
  const inArray: boolean[] = [];
  let members = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) i = stringEnd(text, i);
    else if (c === 0x3a /* : */) members++;
    else if (c === 0x2c /* , */) {
      if (inArray[inArray.length - 1]) members++;
    } else if (c === 0x5b /* [ */ || c === 0x7b /* { */) {
      if (inArray.push(c === 0x5b) > maxDepth) return 'deep';
      if (c === 0x5b) {
        let j = i + 1;
        while (j < text.length && isSpace(text.charCodeAt(j))) j++;
        if (j < text.length && text.charCodeAt(j) !== 0x5d) members++; // the first item
      }
    } else if (c === 0x5d || c === 0x7d) inArray.pop();
  }
  return members;
}
