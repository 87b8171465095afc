/** The manifest files of a folder: *.yaml, *.yml and *.json below it, hidden folders skipped. */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { parseManifests, type Manifest, type ManifestError } from './manifests.js';

const manifestFile = /\.(ya?ml|json)$/i;

/** Whether a file (path relative to the source, `/`-separated) holds manifests: the right extension, nothing hidden on the way. */
export function isManifestPath(path: string): boolean {
  return manifestFile.test(path) && !path.split('/').some((part) => part.startsWith('.'));
}

async function walk(dir: string, out: string[]): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await walk(path, out);
    else if (entry.isFile() && manifestFile.test(entry.name)) out.push(path);
  }
}

/**
 * teamkeys' own files (a report, a saved plan) are never manifests: a report folder or plan file
 * written into the checkout (the Action with `source: .`, `--report-dir` inside the source) must
 * not make the next run fail on `unknown kind "Report"`.
 */
function isTeamkeysOutput(object: Record<string, unknown>): boolean {
  return object.apiVersion === 'teamkeys/v1' && (object.kind === 'Report' || object.kind === 'SavedPlan');
}

/** Parses files already read, in the order given. */
export function parseFiles(files: { path: string; text: string }[]): { manifests: Manifest[]; errors: ManifestError[]; files: number } {
  const manifests: Manifest[] = [];
  const errors: ManifestError[] = [];
  for (const f of files) {
    const parsed = parseManifests(f.text, f.path);
    manifests.push(...parsed.manifests.filter((m) => !isTeamkeysOutput(m.object)));
    errors.push(...parsed.errors);
  }
  return { manifests, errors, files: files.length };
}

/** The error a source reports for a --path that is not there. */
export function missingFolder(file: string): { manifests: Manifest[]; errors: ManifestError[]; files: number } {
  return { manifests: [], errors: [{ file, line: 1, column: 1, message: 'no such folder in the source' }], files: 0 };
}

/** Every manifest below `dir`, files named relative to `root` so reports read the same everywhere. */
export async function readManifests(root: string, dir: string): Promise<{ manifests: Manifest[]; errors: ManifestError[]; files: number }> {
  const info = await stat(dir).catch(() => undefined);
  if (!info?.isDirectory()) return missingFolder(relative(root, dir) || '.');
  const paths: string[] = [];
  await walk(dir, paths);
  paths.sort();
  return parseFiles(await Promise.all(paths.map(async (path) => ({ path: relative(root, path), text: await readFile(path, 'utf8') }))));
}
