/**
 * What parsed manifests keep in memory is about what they hold, not what the YAML parser built on the
 * way (found by a review): yaml builds a quoted scalar a piece at a time, a V8 rope of about 32
 * bytes a character, and every parsed document is kept (errors are located in it) until the run
 * ends; a 126 MB source of escaped double-quoted text held 2 GB in `validate`, 0.96 GB now.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { parseManifests } from '../../src/gitops/source/manifests.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Parses `text` four times, keeping each: the heap they hold (after collection) per character of text, and what was parsed. */
function heldPerChar(text: string) {
  gc();
  const before = process.memoryUsage().heapUsed;
  const kept = Array.from({ length: 4 }, () => parseManifests(text, 't.yaml'));
  gc();
  return { ratio: (process.memoryUsage().heapUsed - before) / (4 * text.length), kept };
}

describe('parsed manifests in memory', () => {
  it('keep less than twice their text for escaped double-quoted scalars (13 times before)', () => {
    // 2 MB: a Team whose displayName and 2,000 labels are double-quoted, escapes throughout.
    const escaped = (n: number) => `"${'a\\u00e9b\\n'.repeat(n)}"`;
    const labels = Array.from({ length: 2000 }, (_, i) => `    l${i}: ${escaped(50)}`).join('\n');
    const text = `apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: t\n  labels:\n${labels}\nspec:\n  users: [ana]\n  displayName: ${escaped(100_000)}\n`;
    const { ratio, kept } = heldPerChar(text);
    // What was parsed is whole and still locates its fields.
    for (const { manifests, errors } of kept) {
      expect(errors).toEqual([]);
      expect((manifests[0]!.object.spec as { displayName: string }).displayName).toHaveLength(400_000);
      expect(manifests[0]!.locate('spec.displayName')).toEqual({ file: 't.yaml', line: 2008, column: 16 });
    }
    expect(ratio).toBeLessThan(2);
  });

  it('keep a few times their text for lines of comments, not 16 times', () => {
    // Short comment lines (each a piece of the rope) before the document and inside its maps, which the document keeps.
    const comments = (n: number, indent: string) => `${indent}#a\n`.repeat(n).slice(0, -1);
    const text = `${comments(100_000, '')}\napiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: t\nspec:\n${comments(100_000, '  ')}\n  users: [ana]\n`;
    const { ratio, kept } = heldPerChar(text);
    for (const { manifests, errors } of kept) {
      expect(errors).toEqual([]);
      expect(manifests[0]!.locate('spec.users')).toEqual({ file: 't.yaml', line: 200_006, column: 10 });
    }
    // The line table that locates fields takes 4 bytes a line, more than these 3-byte lines: about 3 times in all, 16.6 before.
    expect(ratio).toBeLessThan(4);
  });
});
