/**
 * The manifest files of a revision, read from git's objects (nothing checked out). git stores a
 * symbolic link as a blob holding its target: a link whose target leaves the repository is an
 * error at the link (`symbolic link outside the source`), one inside is followed as a checkout
 * would follow it (a file, or a folder), named where the link is. A --path that is a link is
 * followed the same way. A folder or file reached twice is read once, by the folder reader's rule
 * (files.ts): under its own name when reached without a link, else under the first link's, links
 * followed after everything reached without them, a round at a time in name order (a review found a
 * link to a folder the listing had covered read again: 156 manifests where the folder reader found
 * 12). A link into a hidden file or folder is refused, as there. Blobs are read within the budget
 * of read-budget.ts.
 */
import { posix } from 'node:path';
import { simpleGit } from 'simple-git';
import { byText, hasHiddenPart, hiddenTarget, isManifestPath, outsideSource } from './files.js';
import { blobSizes, catBlobs } from './git-mirror.js';
import { withinBudget } from './read-budget.js';
import { append } from '../append.js';
import { isAttributes, reEncodingErrors } from './attributes.js';
import type { ManifestError } from './manifests.js';

interface Entry {
  mode: string;
  type: string;
  sha: string;
  path: string;
}

/** Links followed in resolving one path at most, as the system (Linux's MAXSYMLINKS): a loop of links ends here. */
const maxHops = 40;

/** `git ls-tree -z --full-tree` of the revision, with `flags` (-r: recursive, -t: folders too). */
async function listTree(dir: string, revision: string, flags: string[]): Promise<Entry[]> {
  const listing = await simpleGit(dir).raw(['ls-tree', ...flags, '-z', '--full-tree', revision]);
  return listing
    .split('\0')
    .filter(Boolean)
    .map((entry) => {
      const tab = entry.indexOf('\t');
      const [mode, type, sha] = entry.slice(0, tab).split(' ');
      return { mode: mode!, type: type!, sha: sha!, path: entry.slice(tab + 1) };
    });
}

/**
 * The revision's whole tree, listed once (`ls-tree -r -t`: folders too), and its links' targets
 * read a round at a time in one process: each link cost two git processes per hop before (1,600
 * links took 10.5 s, found by a review).
 */
class Tree {
  private readonly at = new Map<string, number>();
  private readonly targets = new Map<string, string>();

  private constructor(
    private readonly dir: string,
    private readonly entries: Entry[],
  ) {
    entries.forEach((e, i) => this.at.set(e.path, i));
  }

  static async of(dir: string, revision: string): Promise<Tree> {
    return new Tree(dir, await listTree(dir, revision, ['-r', '-t']));
  }

  /** Every entry below the folder `from` ('' for the root), folders left out: git lists a folder's entries right after it. */
  *below(from: string): Generator<Entry> {
    const first = from === '' ? 0 : (this.at.get(from) ?? this.entries.length) + 1;
    for (let i = first; i < this.entries.length; i++) {
      const e = this.entries[i]!;
      if (from !== '' && !e.path.startsWith(`${from}/`)) return;
      if (e.type !== 'tree') yield e;
    }
  }

  /** Reads the targets of these links (one git process), so that resolving them asks git nothing more. */
  async readTargets(links: Entry[]): Promise<void> {
    const unread = [...new Set(links.map((l) => l.sha).filter((sha) => !this.targets.has(sha)))];
    const texts = await catBlobs(this.dir, unread);
    unread.forEach((sha, i) => this.targets.set(sha, texts[i]!));
  }

  /**
   * The entry at a path from the root, resolved one part at a time as the system resolves it: a
   * link met on the way is replaced by its target, read from the folder holding it, and `..`
   * climbs the folder reached so far, not the path's text (a review found `l/x` unread through a
   * link `l` and `l/..` climbing from where the link is). `outside` when the path leaves the
   * repository, meets an absolute link or a loop (more than the system's 40 links), or follows a
   * link to nothing (the folder reader answers a link to nothing as one to outside); undefined
   * when nothing is there and no link was followed.
   */
  async resolve(path: string): Promise<Entry | 'outside' | undefined> {
    const rest = path.split('/');
    const reached: string[] = [];
    let hops = 0;
    const nothing = () => (hops > 0 ? 'outside' : undefined);
    while (rest.length > 0) {
      const part = rest.shift()!;
      if (part === '' || part === '.') continue;
      if (part === '..') {
        if (reached.length === 0) return 'outside';
        reached.pop();
        continue;
      }
      const i = this.at.get([...reached, part].join('/'));
      const entry = i === undefined ? undefined : this.entries[i];
      if (!entry) return nothing();
      if (entry.mode === '120000') {
        const target = await this.target(entry);
        // The system holds a link's target under PATH_MAX; git holds any blob.
        if (++hops > maxHops || target === '' || target.startsWith('/') || target.length >= 4096) return 'outside';
        rest.unshift(...target.split('/'));
        continue;
      }
      // A file with more path after it, even a `/`, is nothing (the system's ENOTDIR).
      if (rest.length > 0 && entry.type !== 'tree') return nothing();
      reached.push(part);
    }
    if (reached.length === 0) return { mode: '040000', type: 'tree', sha: '', path: '' };
    return this.entries[this.at.get(reached.join('/'))!]!;
  }

  /** A link's target as git holds it (read first when it was not). */
  private async target(link: Entry): Promise<string> {
    if (!this.targets.has(link.sha)) await this.readTargets([link]);
    return this.targets.get(link.sha)!;
  }
}

/** The manifest files at `revision` below `sub`, named from the repository root; `missing` when `sub` is no folder. */
export async function readTree(dir: string, revision: string, sub: string): Promise<{ files: { path: string; text: string }[]; errors: ManifestError[] } | 'missing'> {
  const errors: ManifestError[] = [];
  const found: { path: string; sha: string }[] = [];
  const start = sub === '.' ? '' : posix.normalize(sub).replace(/\/+$/, '');
  if (start === '..' || start.startsWith('../') || posix.isAbsolute(start)) return { files: [], errors: [{ file: sub, line: 1, column: 1, message: 'the folder is outside the source' }] };
  const tree = await Tree.of(dir, revision);
  const root = await tree.resolve(start);
  if (root === 'outside') return { files: [], errors: [{ file: sub, line: 1, column: 1, message: outsideSource }] };
  if (root?.type !== 'tree') return 'missing';
  // A --path that is a link into a hidden folder is refused as any such link is (files.ts does the same).
  if (root.path !== start && hasHiddenPart(root.path)) return { files: [], errors: [{ file: sub, line: 1, column: 1, message: hiddenTarget }] };
  // The folders listed (each listing is recursive: everything below one is read), and the files found, where git holds them.
  const seen = new Set<string>();
  const seenFiles = new Set<string>();
  const covered = (path: string) => {
    for (let p = path; ; p = posix.dirname(p)) {
      if (seen.has(p === '.' ? '' : p)) return true;
      if (p === '.' || p === '' || p === '/') return false;
    }
  };
  const foundFile = (path: string, from: string, sha: string) => {
    if (seenFiles.has(from)) return;
    seenFiles.add(from);
    found.push({ path, sha });
  };
  let links: { path: string; entry: Entry }[] = [];
  // `at` is where the files are shown, `from` where git holds them (they differ below a followed link).
  const visit = async (at: string, from: string): Promise<void> => {
    if (covered(from)) return;
    // Folders below another folder read already were read with it (the folder reader skips them too).
    const before = [...seen];
    seen.add(from);
    const readBefore = (p: string) => before.some((s) => s !== '' && p.startsWith(`${s}/`));
    const below = (p: string) => (from === '' ? p : p.slice(from.length + 1));
    const shown = (p: string) => (at === '' ? below(p) : `${at}/${below(p)}`);
    for (const e of tree.below(from)) {
      const path = shown(e.path);
      if (!isManifestPath(path) && e.mode !== '120000') continue;
      if (hasHiddenPart(path) || readBefore(e.path)) continue;
      if (e.mode !== '120000') {
        if (e.type === 'blob') foundFile(path, e.path, e.sha);
      } else links.push({ path, entry: e });
    }
  };
  await visit(start, root.path);
  // Links after everything reached without them, a round at a time in name order, as files.ts follows them.
  while (links.length > 0) {
    const round = links.sort(byText((l) => l.path));
    links = [];
    await tree.readTargets(round.map((l) => l.entry));
    for (const { path, entry } of round) {
      // Links are counted within one link's resolution, as the system counts them for the folder
      // reader; folders read through links nest without a bound but their own (each is read once).
      // Resolved where it is shown, through the links before it, as the system counts them (a review:
      // resolved where git holds it, a chain of folders linking on read 45 where the system stops at 40).
      const target = await tree.resolve(path);
      // A link to nothing answers as one to outside does (files.ts): which one it is would tell what exists there.
      if (target === 'outside' || target === undefined) errors.push({ file: path, line: 1, column: 1, message: outsideSource });
      else if (hasHiddenPart(target.path)) errors.push({ file: path, line: 1, column: 1, message: hiddenTarget });
      else if (target.type === 'tree') await visit(path, target.path);
      else if (target.type === 'blob' && isManifestPath(path)) foundFile(path, target.path, target.sha);
    }
  }
  found.sort(byText((f) => f.path));
  const sizes = await blobSizes(dir, found.map((f) => f.sha));
  const budget = withinBudget(found.map((f, i) => ({ ...f, size: sizes[i]! })));
  append(errors, budget.errors);
  const texts = await catBlobs(dir, budget.read.map((f) => f.sha), budget.read.reduce((n, f) => n + f.size, 0));
  // In file order, as the folder reader gives them.
  errors.sort(byText((e) => e.file));
  return { files: budget.read.map((f, i) => ({ path: f.path, text: texts[i]! })), errors };
}

/** The refusals for the .gitattributes files of `revision` (see attributes.ts). */
export async function treeReEncoding(dir: string, revision: string): Promise<ManifestError[]> {
  const found = (await listTree(dir, revision, ['-r'])).filter((e) => e.type === 'blob' && isAttributes(e.path)).sort((a, b) => (a.path < b.path ? -1 : 1));
  if (found.length === 0) return [];
  const texts = await catBlobs(dir, found.map((e) => e.sha));
  return reEncodingErrors(found.map((e, i) => ({ path: e.path, text: texts[i]! })));
}
