/**
 * Policies as they are at a git ref (the Action's `policy-ref`, by default a pull request's base):
 * a pull request that breaks a policy cannot delete or weaken it in the same change, since the
 * policy files are read from git's objects at that ref, not from the pull request's checkout.
 */
import { stat } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { simpleGit } from 'simple-git';
import { parseFiles } from '../source/files.js';
import { resolveOriginRevision, resolveRevision } from '../source/git-mirror.js';
import { redactCredentials } from '../source/git-url.js';
import { readTree } from '../source/git-tree.js';
import type { Manifest, ManifestError } from '../source/manifests.js';

/**
 * A policy folder on disk, or that folder as it is at a git ref (what a pull request cannot change).
 * `fromOrigin`: the ref is read from origin, never from a local ref of that name (the Action's
 * default branch for a run on another ref); `named`: what messages call the ref (default policy-ref).
 */
export type PolicySource = string | PolicyRef;
export interface PolicyRef {
  dir: string;
  ref: string;
  fromOrigin?: boolean;
  named?: string;
}

/** The nearest folder that exists, from `dir` up: a pull request may have deleted the policy folder itself. */
async function existingAncestor(dir: string): Promise<string> {
  let at = resolve(dir);
  while (!(await stat(at).then((s) => s.isDirectory(), () => false)) && dirname(at) !== at) at = dirname(at);
  return at;
}

/** The Policy manifests of `dir` at `ref`, files named relative to `base`; errors name the folder. */
export async function readPoliciesAt({ dir, ref, fromOrigin, named = 'policy-ref' }: PolicyRef, base: string): Promise<{ manifests: Manifest[]; errors: ManifestError[] }> {
  const folder = resolve(base, dir);
  const shown = relative(base, folder).split(sep).join('/') || '.';
  const fail = (message: string) => ({ manifests: [], errors: [{ file: shown, line: 1, column: 1, message }] });
  const top = (await simpleGit(await existingAncestor(folder)).revparse(['--show-toplevel']).catch(() => '')).trim();
  if (!top) return fail(`the policy folder is not in a git repository, so it cannot be read at ${ref} (${named})`);
  const within = relative(top, folder);
  if (within.startsWith('..') || isAbsolute(within)) return fail(`the policy folder is outside the repository ${top}`);
  let revision: string;
  try {
    revision = await (fromOrigin ? resolveOriginRevision : resolveRevision)(top, ref);
  } catch (err) {
    return fail(redactCredentials(`cannot read the policies at ${ref} (${named}): ${err instanceof Error ? (err.message.split('\n').find((l) => l.trim()) ?? err.message) : String(err)}`));
  }
  const tree = await readTree(top, revision, within.split(sep).join('/') || '.');
  if (tree === 'missing') return fail(`no such folder at ${ref} (${named}): policies are read from there, so the change being checked cannot change them; add the policy folder there first`);
  // readTree names files from the repository's root; reports name them from `base`.
  const rename = (file: string) => relative(base, resolve(top, file)).split(sep).join('/');
  const parsed = parseFiles(tree.files.map((f) => ({ path: rename(f.path), text: f.text })));
  return { manifests: parsed.manifests, errors: [...tree.errors.map((e) => ({ ...e, file: rename(e.file) })), ...parsed.errors] };
}
