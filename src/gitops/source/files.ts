/** The manifest files of a folder: *.yaml, *.yml and *.json below it, hidden folders skipped. */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { parseManifests, type Manifest, type ManifestError } from './manifests.js';

const manifestFile = /\.(ya?ml|json)$/i;

async function walk(dir: string, out: string[]): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await walk(path, out);
    else if (entry.isFile() && manifestFile.test(entry.name)) out.push(path);
  }
}

/** Every manifest below `dir`, files named relative to `root` so reports read the same everywhere. */
export async function readManifests(root: string, dir: string): Promise<{ manifests: Manifest[]; errors: ManifestError[]; files: number }> {
  const info = await stat(dir).catch(() => undefined);
  if (!info?.isDirectory()) {
    return { manifests: [], errors: [{ file: relative(root, dir) || '.', line: 1, column: 1, message: 'no such folder in the source' }], files: 0 };
  }
  const paths: string[] = [];
  await walk(dir, paths);
  paths.sort();
  const manifests: Manifest[] = [];
  const errors: ManifestError[] = [];
  for (const path of paths) {
    const parsed = parseManifests(await readFile(path, 'utf8'), relative(root, path));
    manifests.push(...parsed.manifests);
    errors.push(...parsed.errors);
  }
  return { manifests, errors, files: paths.length };
}
