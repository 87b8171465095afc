/**
 * The keys the key health sweep has warned of while they stay in the --warn-expiry window, by uid.
 * A fleet of short-lived keys has every key in the window, so this set is as large as the fleet:
 * held as uid strings it cost about 90 bytes a key (a 36-character string and a map entry: 9 MiB
 * at 100,000 keys, 90 MiB at a million). Held here as two small integers a key, with no string: a
 * uid is remembered by two independent 30- and 20-bit hashes of it, the first the map's key, the
 * second beside the sweep's mark in the value (both integers V8 keeps unboxed). Two uids whose first
 * hashes meet but whose second differ go to an exact map of uids (rare: a few at a million keys).
 * Only two uids meeting in both (50 bits: about one chance in 2,000 for a million keys in the
 * window at once) are taken for one, which can cost one log line (the later key is taken as warned
 * of); the gauges and the notifier do not read this set.
 */

/** How many sweeps the mark tells apart; an entry unseen by every complete sweep is dropped at the first. */
const marks = 1024;
const secondBits = 20;

/** murmur3's finalizer: every bit of the result depends on every bit of `h`. */
function mix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * A multiplicative hash over the string's UTF-16 code units, mixed at the end. The two hashes use
 * different multipliers and seeds: with one multiplier (FNV-1a from two bases) their low bits move
 * together, and two uids meeting in the first met in the second four times as often as chance.
 */
function hash(s: string, seed: number, multiplier: number): number {
  let h = seed;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), multiplier);
  return mix(h);
}

// 30 bits: a small integer (Smi) on every V8 build, with or without pointer compression.
const firstHash = (uid: string) => hash(uid, 0x811c9dc5, 0x01000193) & 0x3fffffff;
const secondHash = (uid: string) => hash(uid, 0x9747b28c, 0x5bd1e995) & ((1 << secondBits) - 1);

export class WarnedKeys {
  /** First hash -> second hash * marks + the mark of the last sweep that saw it. */
  private readonly byHash = new Map<number, number>();
  /** uid -> mark, for a uid whose first hash another uid holds with a different second hash. */
  private readonly exact = new Map<string, number>();

  get size(): number {
    return this.byHash.size + this.exact.size;
  }

  /** Notes that `sweep` found the key in the window; whether it was remembered already. */
  note(uid: string, sweep: number): boolean {
    const mark = sweep % marks;
    const first = firstHash(uid);
    const second = secondHash(uid);
    const held = this.byHash.get(first);
    if (held === undefined) {
      this.byHash.set(first, second * marks + mark);
      return this.exact.delete(uid);
    }
    if (Math.floor(held / marks) === second) {
      this.byHash.set(first, second * marks + mark);
      return true;
    }
    const known = this.exact.has(uid);
    this.exact.set(uid, mark);
    return known;
  }

  /** Forgets every key the complete sweep `sweep` did not find in the window. */
  forgetUnseen(sweep: number): void {
    const mark = sweep % marks;
    for (const [first, held] of this.byHash) if (held % marks !== mark) this.byHash.delete(first);
    for (const [uid, seen] of this.exact) if (seen !== mark) this.exact.delete(uid);
  }

  clear(): void {
    this.byHash.clear();
    this.exact.clear();
  }
}

/** For tests: the two hashes of a uid. */
export const hashesOf = (uid: string): [number, number] => [firstHash(uid), secondHash(uid)];
