/**
 * CRC-32 (IEEE 802.3, the polynomial zlib, PNG and GitHub's token checksums use), table-driven.
 * Node 20 has no zlib.crc32 (Node 22+), and no CRC library is installed, so it is written here once.
 */
const table = new Uint32Array(256);
for (let n = 0; n < 256; n++) {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  table[n] = c >>> 0;
}

/** The CRC-32 of `data` (a string is taken as its UTF-8 bytes), as an unsigned 32-bit number. */
export function crc32(data: string | Uint8Array): number {
  // An ASCII string (every key value) is its own UTF-8: read without encoding it first.
  if (typeof data === 'string' && !/[^\x00-\x7f]/.test(data)) {
    let crc = 0xffffffff;
    for (let i = 0; i < data.length; i++) crc = table[(crc ^ data.charCodeAt(i)) & 0xff]! ^ (crc >>> 8);
    return (crc ^ 0xffffffff) >>> 0;
  }
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  let crc = 0xffffffff;
  for (const byte of bytes) crc = table[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
