/**
 * What a source's reader reads at most. A source may come from a pull request, whose author pays
 * nothing for what the reader spends: git stores a thousand identical files as one blob, and a
 * sparse file of 600 MB takes no room on disk (found by a review: such a blob crashed the reader
 * with no file named). A file over the bound, or past the source's budget, is an error at that file,
 * unread.
 */
import type { ManifestError } from './manifests.js';

/** One manifest file: far above any file the YAML reader's node bound lets through, unless one scalar is huge. */
export const maxManifestFileBytes = 8 * 1024 * 1024;
/** Every manifest file of one source together: 100,000 keys take about 30 MB. */
export const maxSourceBytes = 128 * 1024 * 1024;

const mib = (bytes: number) => `${Math.round(bytes / 1024 / 1024)} MiB`;

/**
 * Which of the files (in the order given, with their sizes) are read: each at most
 * maxManifestFileBytes, all together at most maxSourceBytes; an error for each left unread.
 */
export function withinBudget<T extends { path: string; size: number }>(files: T[]): { read: T[]; errors: ManifestError[] } {
  const read: T[] = [];
  const errors: ManifestError[] = [];
  let total = 0;
  for (const f of files) {
    const at = { file: f.path, line: 1, column: 1 };
    if (f.size > maxManifestFileBytes) errors.push({ ...at, message: `the file is ${f.size} bytes, more than the ${mib(maxManifestFileBytes)} teamkeys reads of one manifest file: not read` });
    else if (total + f.size > maxSourceBytes) errors.push({ ...at, message: `the source's manifest files hold more than the ${mib(maxSourceBytes)} teamkeys reads of one source: not read` });
    else {
      total += f.size;
      read.push(f);
    }
  }
  return { read, errors };
}
