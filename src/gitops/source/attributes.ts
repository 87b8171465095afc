/**
 * One reader of bytes: a source is read from a checkout (the Action, a folder) or from git's
 * objects (the sidecar, --source URL, --ref), and both must see the same manifests. git keeps them
 * the same except where an attribute re-encodes a file on checkout: `working-tree-encoding`
 * (`*.yaml working-tree-encoding=SHIFT_JIS` makes the checkout hold other bytes than the object,
 * so what the pull request's comment showed is not what a sidecar applies). A repository whose
 * .gitattributes sets it, for any pattern, is refused by both readers, at the attribute's
 * file:line:col. (eol conversion only changes line ends, which YAML reads the same; filters need
 * the reader's own git config, which a pull request does not control.)
 */
import { lstat, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { simpleGit } from 'simple-git';
import type { ManifestError } from './manifests.js';
import { isManifestPath } from './files.js';

const attribute = /(^|\s)-?!?working-tree-encoding(=\S*)?(?=\s|$)/;

/** The refusals for `.gitattributes` files (paths from the repository root) that set working-tree-encoding. */
export function reEncodingErrors(files: { path: string; text: string }[]): ManifestError[] {
  const errors: ManifestError[] = [];
  for (const f of files) {
    f.text.split(/\r?\n/).forEach((line, i) => {
      const trimmed = line.trim();
      if (trimmed === '' || trimmed.startsWith('#')) return;
      const m = attribute.exec(trimmed);
      if (!m) return;
      errors.push({
        file: f.path,
        line: i + 1,
        column: line.indexOf(m[0].trim()) + 1,
        message: `${m[0].trim()} re-encodes files between git's objects and the checkout, so a plan read from the checkout and one read from git (the sidecar, --source URL) would parse different bytes: teamkeys refuses the source; remove the attribute and keep the manifests in UTF-8`,
      });
    });
  }
  return errors;
}

const isAttributes = (path: string) => path === '.gitattributes' || path.endsWith('/.gitattributes');

/**
 * The refusals a work tree's listing gives, from one `git ls-files`: its .gitattributes files that
 * re-encode (tracked or not), named from its top; and the manifests below any of `folders` (paths
 * from the top: the folders a folder source read, links' targets among them) that a sparse
 * checkout left out. A folder source reads what is on disk, so a file the sparse set excludes would
 * read as removed and `--prune` would delete its objects: found by a review (and, for a folder
 * reached through a link, by the review of that fix). A skip-worktree file still on disk is read as
 * any other.
 */
export async function workTreeRefusals(top: string, folders: readonly string[]): Promise<ManifestError[]> {
  const listed = await simpleGit(top).raw(['ls-files', '-t', '-z', '--cached', '--others', '--exclude-standard']);
  const entries = listed.split('\0').filter((e) => e.length > 2).map((e) => ({ tag: e[0], path: e.slice(2) }));
  const paths = [...new Set(entries.map((e) => e.path).filter(isAttributes))].sort();
  const files = await Promise.all(paths.map(async (path) => ({ path, text: await readFile(join(top, path), 'utf8').catch(() => '') })));
  const prefixes = folders.map((f) => (f === '' || f === '.' ? '' : `${f.replace(/\/+$/, '')}/`));
  const below = (path: string) => prefixes.some((prefix) => path.startsWith(prefix) && isManifestPath(path.slice(prefix.length)));
  const skipped = entries.filter((e) => e.tag === 'S' && below(e.path)).map((e) => e.path);
  const absent = (await Promise.all(skipped.map(async (path) => ((await lstat(join(top, path)).then(() => true, () => false)) ? undefined : path)))).filter((p): p is string => p !== undefined).sort();
  return [...reEncodingErrors(files), ...absent.map((file) => ({ file, line: 1, column: 1, message: sparseMessage }))];
}

const sparseMessage =
  'not checked out (the sparse checkout leaves it out): a folder source reads what is on disk, so its objects would be planned as removed; widen the sparse checkout (git sparse-checkout add) or read the repository from git (--ref HEAD)';

export { isAttributes };
