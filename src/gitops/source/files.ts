/**
 * The manifest files of a folder: *.yaml, *.yml and *.json below it, hidden folders skipped.
 * A source may come from a pull request, so reading never leaves the source's root: a symbolic
 * link (or a --path) that resolves outside it, or to nothing, is an error at the link, with the
 * same words either way, so that errors say nothing about what exists outside. A link that
 * resolves inside is followed, named where the link is; a folder or file reached twice is read
 * once: under its own name when it is reached without a link, else under the first link's name,
 * links followed after everything reached without them, in name order (git-tree.ts reads a
 * revision by the same rule, so both readers agree). Files are read within the budget of read-budget.ts.
 */
import { lstat, readdir, readFile, realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';
import { parseManifests, type Manifest, type ManifestError } from './manifests.js';
import { append } from '../append.js';
import { withinBudget } from './read-budget.js';

const manifestFile = /\.(ya?ml|json)$/i;

/** The error for a link (or --path) that leads outside the source. */
export const outsideSource = 'symbolic link outside the source';
export const hiddenTarget = 'symbolic link into a hidden file or folder (such as .git): not read';

/** Whether a file (path relative to the source, `/`-separated) holds manifests: the right extension, nothing hidden on the way. */
export function isManifestPath(path: string): boolean {
  return manifestFile.test(path) && !hasHiddenPart(path);
}

type Loaded = { manifests: Manifest[]; errors: ManifestError[]; files: number; folders?: string[] };

/** Whether a relative path (parts split by `separator`) has a hidden part: `.git`, `.github/x`; never read, nor through a link. */
export function hasHiddenPart(path: string, separator = '/'): boolean {
  return path.split(separator).some((part) => part.startsWith('.'));
}

/** A comparator by a text of each item, in code-unit order (not the locale's): how both readers order names, files and errors. */
export function byText<T>(text: (item: T) => string): (a: T, b: T) => number {
  return (a, b) => {
    const x = text(a);
    const y = text(b);
    return x < y ? -1 : x > y ? 1 : 0;
  };
}

/** Whether `path` is `root` or below it (both real paths). */
export function within(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

interface Walk {
  realRoot: string;
  names: string;
  /** Real paths of the folders read, so a link back to a folder already read ends there. */
  seen: Set<string>;
  /** Real paths of the files found: a second name (a link) for one adds nothing, as git's reader does. */
  seenFiles: Set<string>;
  files: string[];
  errors: ManifestError[];
  /** Links found and not yet followed: followed once everything reached without them is read. */
  links: { path: string; real: string; name: string }[];
}

const errorAt = (w: Walk, path: string, message: string) => w.errors.push({ file: relative(w.names, path).split(sep).join('/') || '.', line: 1, column: 1, message });

async function walk(w: Walk, dir: string, realDir: string): Promise<void> {
  if (w.seen.has(realDir)) return;
  w.seen.add(realDir);
  // In name order, so which name a file or folder reached twice is read under does not depend on the filesystem.
  const entries = (await readdir(dir, { withFileTypes: true })).sort(byText((e) => e.name));
  for (const entry of entries) {
    if (entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await walk(w, path, join(realDir, entry.name));
    else if (entry.isFile()) {
      if (manifestFile.test(entry.name)) found(w, path, join(realDir, entry.name));
    } else if (entry.isSymbolicLink()) {
      const real = await realpath(path).catch(() => undefined);
      if (!real || !within(w.realRoot, real)) {
        errorAt(w, path, outsideSource);
        continue;
      }
      // Hidden entries are never read (above); nor through a link: `.git/config` can hold a token
      // (a review had a pull request's link make the loader parse it).
      if (hasHiddenPart(relative(w.realRoot, real), sep)) {
        errorAt(w, path, hiddenTarget);
        continue;
      }
      w.links.push({ path, real, name: entry.name });
    }
  }
}

function found(w: Walk, path: string, real: string): void {
  if (w.seenFiles.has(real)) return;
  w.seenFiles.add(real);
  w.files.push(path);
}

/** Follows the links found, a round at a time in name order (the links a round's folders hold make the next round). */
async function followLinks(w: Walk): Promise<void> {
  while (w.links.length > 0) {
    const round = w.links.sort(byText((l) => l.path));
    w.links = [];
    for (const link of round) {
      const info = await stat(link.real);
      if (info.isDirectory()) await walk(w, link.path, link.real);
      else if (info.isFile() && manifestFile.test(link.name)) found(w, link.path, link.real);
    }
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

/** Files read at once at most: a source of thousands of files must not hit the open-file limit (EMFILE under ulimit -n 1024). */
export const openFilesAtOnce = 32;

/** Runs `each` over `items`, at most openFilesAtOnce at a time. */
async function fewAtOnce<T, R>(items: T[], each: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < items.length; i = next++) out[i] = await each(items[i]!);
  };
  await Promise.all(Array.from({ length: Math.min(openFilesAtOnce, items.length) }, worker));
  return out;
}

/**
 * Reads `files` in order, named relative to `names`, within the budget of read-budget.ts (sizes
 * asked first: a file over it is never read); at most openFilesAtOnce open at a time.
 */
async function readAll(files: string[], names: string): Promise<{ files: { path: string; text: string }[]; errors: ManifestError[] }> {
  const sized = await fewAtOnce(files, async (file) => ({ file, path: relative(names, file).split(sep).join('/'), size: (await stat(file)).size }));
  const { read, errors } = withinBudget(sized);
  return { files: await fewAtOnce(read, async (f) => ({ path: f.path, text: await readFile(f.file, 'utf8') })), errors };
}

/** Parses files already read, in the order given. */
export function parseFiles(files: { path: string; text: string }[]): Loaded {
  const manifests: Manifest[] = [];
  const errors: ManifestError[] = [];
  for (const f of files) {
    const parsed = parseManifests(f.text, f.path);
    append(manifests, parsed.manifests.filter((m) => !isTeamkeysOutput(m.object)));
    append(errors, parsed.errors);
  }
  return { manifests, errors, files: files.length };
}

/** The error a source reports for a --path that is not there. */
export function missingFolder(file: string): Loaded {
  return { manifests: [], errors: [{ file, line: 1, column: 1, message: 'no such folder in the source' }], files: 0 };
}

/** Whether a folder between `root` (excluded) and `dir` is a symbolic link. */
async function linkOnTheWay(root: string, dir: string): Promise<boolean> {
  let at = root;
  for (const part of relative(root, dir).split(sep).filter(Boolean)) {
    at = join(at, part);
    const info = await lstat(at).catch(() => undefined);
    if (!info) return false;
    if (info.isSymbolicLink()) return true;
  }
  return false;
}

/**
 * Every manifest below `dir`, never leaving `root`; files are named relative to `names` (default
 * `root`) so reports read the same everywhere.
 */
export async function readManifests(root: string, dir: string, names = root): Promise<Loaded> {
  const shown = relative(names, dir).split(sep).join('/') || '.';
  const realRoot = await realpath(root).catch(() => undefined);
  if (!realRoot || !within(root, dir)) return realRoot ? { manifests: [], errors: [{ file: shown, line: 1, column: 1, message: 'the folder is outside the source' }], files: 0 } : missingFolder(shown);
  const realDir = await realpath(dir).catch(() => undefined);
  // A link to nothing answers as one to outside does: which one it is would tell what exists there.
  if (!realDir && (await linkOnTheWay(root, dir))) return { manifests: [], errors: [{ file: shown, line: 1, column: 1, message: outsideSource }], files: 0 };
  if (realDir && !within(realRoot, realDir)) return { manifests: [], errors: [{ file: shown, line: 1, column: 1, message: outsideSource }], files: 0 };
  // A --path that is (or passes through) a link into a hidden folder is refused as any such link is.
  if (realDir && relative(realRoot, realDir) !== relative(root, dir) && hasHiddenPart(relative(realRoot, realDir), sep)) return { manifests: [], errors: [{ file: shown, line: 1, column: 1, message: hiddenTarget }], files: 0 };
  if (!realDir || !(await stat(realDir)).isDirectory()) return missingFolder(shown);
  const w: Walk = { realRoot, names, seen: new Set(), seenFiles: new Set(), files: [], errors: [], links: [] };
  await walk(w, dir, realDir);
  await followLinks(w);
  w.files.sort();
  const all = await readAll(w.files, names);
  append(w.errors, all.errors);
  const parsed = parseFiles(all.files);
  // The folders read (real paths), links' targets among them: what a sparse checkout must not have thinned.
  return { ...parsed, errors: [...w.errors.sort(byText((e) => e.file)), ...parsed.errors], folders: [...w.seen].sort() };
}
