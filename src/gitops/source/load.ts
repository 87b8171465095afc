/**
 * Loads the desired state: a local folder as it is on disk, or a git repository (local path or
 * URL) at a ref, read from a bare mirror (kept in `mirrorDir` between runs, else a temporary one),
 * optionally below a sub-path.
 */
import { lstat, mkdtemp, realpath, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { simpleGit } from 'simple-git';
import { SourceError } from './errors.js';
import type { Manifest, ManifestError } from './manifests.js';
import { missingFolder, outsideSource, parseFiles, readManifests, within } from './files.js';
import { resolveRevision, updateMirror } from './git-mirror.js';
import { readTree, treeReEncoding } from './git-tree.js';
import { workTreeRefusals } from './attributes.js';
import { isGitUrl, redactCredentials, withoutCredentials } from './git-url.js';
import { doubleSlashId, formerDefaultIds, gitSourceId, joinId, workTreeOf } from './identity.js';

export interface SourceOptions {
  /** A folder, or a git URL (or any path when `ref` is given). */
  source: string;
  ref?: string;
  /** A sub-folder of the source holding the manifests. */
  path?: string;
  /** Names this source in the annotation that marks the objects it manages (and may prune). */
  sourceId?: string;
  /** Where git mirrors are kept between runs (a daemon's state directory); without it, a temporary one per run. */
  mirrorDir?: string;
}

export interface LoadedSource {
  id: string;
  /** False for a folder outside git given no --source-id: nothing names it the same way twice, so it must not prune. */
  identified: boolean;
  /** Ids this source had by default before (a folder's base name...): objects carrying them are adopted, never pruned. */
  formerIds: string[];
  /** The commit, when the source is (in) a git repository. */
  revision?: string;
  description: string;
  manifests: Manifest[];
  errors: ManifestError[];
  files: number;
}

export { SourceError };

/** A source ready to be read: for a git source, the mirror is fetched and `gitRevision` is the commit a read will see. */
export interface OpenedSource {
  gitRevision?: string;
  read(): Promise<LoadedSource>;
  close(): Promise<void>;
}

/** Whether the source is read as git (a URL, or any path with --ref) rather than as a folder on disk. */
export function isGitSource(opts: SourceOptions): boolean {
  return opts.ref !== undefined || isGitUrl(opts.source);
}

function others(ids: string[], id: string): string[] {
  return [...new Set(ids)].filter((x) => x !== id);
}

async function openFolder(opts: SourceOptions): Promise<OpenedSource> {
  const root = resolve(opts.source);
  if (!(await stat(root).then((s) => s.isDirectory(), () => false))) {
    throw new SourceError(`the source folder ${root} does not exist: give --source the folder or git URL holding the manifests`);
  }
  const sub = opts.path ?? '.';
  const read = async (): Promise<LoadedSource> => {
    // A source folder that is itself a link, in a work tree its target is not in (a pull request
    // that commits `gitops` as a link to $HOME or /), is refused at the link: found by a review,
    // the work tree was looked up at the target, which is in none, so nothing bounded the walk.
    if (await linkedOutOfItsTree(root)) return { id: opts.sourceId ?? root, identified: opts.sourceId !== undefined, formerIds: [], description: root, manifests: [], files: 0, errors: [{ file: basename(root), line: 1, column: 1, message: outsideSource }] };
    // Files are named from the repository root (as the git sources and CI annotations name them),
    // or from the folder outside git.
    const tree = await workTreeOf(root);
    const [read, revision] = await Promise.all([
      tree ? readManifests(tree.top, join(tree.top, tree.within, sub)) : readManifests(root, join(root, sub)),
      tree ? simpleGit(root).revparse(['HEAD']).then((r) => r.trim(), () => '') : '',
    ]);
    // The folders the walk read, links' targets among them, as paths from the work tree's top.
    const folders = tree ? (read.folders ?? [join(tree.top, tree.within, sub)]).map((f) => relative(tree.top, f).split(sep).join('/')) : [];
    const refused = tree ? await workTreeRefusals(tree.top, folders) : [];
    const loaded = refused.length > 0 ? { manifests: [], files: read.files, errors: refused } : read;
    const byLocation = tree ? joinId(tree.repo, tree.within, sub) : joinId(root, sub);
    const id = opts.sourceId ?? byLocation;
    const formerIds = others([...formerDefaultIds(opts.source, false, opts.path, root), tree ? doubleSlashId(tree.repo, tree.within, sub) : doubleSlashId(root, sub), byLocation], id);
    return { id, identified: opts.sourceId !== undefined || tree !== undefined, formerIds, description: root, ...(revision ? { revision } : {}), ...loaded };
  };
  return { read, close: async () => {} };
}

async function openGit(opts: SourceOptions): Promise<OpenedSource> {
  const url = withoutCredentials(opts.source);
  const where = `${url}${opts.ref ? ` at ${opts.ref}` : ''}`;
  // git's own message may quote the address as given, token and all.
  const fail = (err: unknown) => new SourceError(redactCredentials(`cannot read git source ${where}: ${err instanceof Error ? (err.message.split('\n').find((l) => l.trim()) ?? err.message) : String(err)}`));
  const temporary = opts.mirrorDir ? undefined : await mkdtemp(join(tmpdir(), 'teamkeys-source-'));
  const close = async () => {
    if (temporary) await rm(temporary, { recursive: true, force: true });
  };
  try {
    const mirror = await updateMirror(opts.mirrorDir ?? temporary!, opts.source);
    const revision = await resolveRevision(mirror, opts.ref ?? 'HEAD');
    const sub = opts.path ?? '.';
    const read = async (): Promise<LoadedSource> => {
      try {
        const [tree, reEncoded] = await Promise.all([readTree(mirror, revision, sub), treeReEncoding(mirror, revision)]);
        const parsed = tree === 'missing' ? missingFolder(sub) : parseFiles(tree.files);
        const read = tree === 'missing' ? parsed : { ...parsed, errors: [...tree.errors, ...parsed.errors] };
        const loaded = reEncoded.length > 0 ? { manifests: [], files: read.files, errors: reEncoded } : read;
        const byRemote = await gitSourceId(opts.source, isGitUrl(opts.source), opts.path);
        const id = opts.sourceId ?? byRemote.id;
        const formerIds = others([...formerDefaultIds(opts.source, true, opts.path, opts.source), byRemote.former, byRemote.id], id);
        return { id, identified: true, formerIds, revision, description: `${url}@${opts.ref ?? 'HEAD'}`, ...loaded };
      } catch (err) {
        throw fail(err);
      }
    };
    return { gitRevision: revision, read, close };
  } catch (err) {
    await close();
    throw fail(err);
  }
}

/** Opens a source: a git source is fetched (into its mirror) and its revision resolved; nothing is parsed yet. */
export function openSource(opts: SourceOptions): Promise<OpenedSource> {
  return isGitSource(opts) ? openGit(opts) : openFolder(opts);
}

/** Opens, reads and closes a source. */
export async function loadSource(opts: SourceOptions): Promise<LoadedSource> {
  const opened = await openSource(opts);
  try {
    return await opened.read();
  } finally {
    await opened.close();
  }
}

/** Whether `root` is a symbolic link whose target lies outside the git work tree holding the link. */
async function linkedOutOfItsTree(root: string): Promise<boolean> {
  if (!(await lstat(root).then((i) => i.isSymbolicLink(), () => false))) return false;
  const tree = await workTreeOf(dirname(root));
  if (!tree) return false;
  const [top, target] = await Promise.all([realpath(tree.top), realpath(root)]);
  return !within(top, target);
}
