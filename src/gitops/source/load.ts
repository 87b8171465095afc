/**
 * Loads the desired state: a local folder as it is on disk, or a git repository (local path or
 * URL) checked out at a ref with simple-git, optionally below a sub-path.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { simpleGit } from 'simple-git';
import type { Manifest, ManifestError } from './manifests.js';
import { readManifests } from './files.js';

export interface SourceOptions {
  /** A folder, or a git URL (or any path when `ref` is given). */
  source: string;
  ref?: string;
  /** A sub-folder of the source holding the manifests. */
  path?: string;
  /** Names this source in the annotation that marks the objects it manages (and may prune). */
  sourceId?: string;
}

export interface LoadedSource {
  id: string;
  /** The commit, when the source is (in) a git repository. */
  revision?: string;
  description: string;
  manifests: Manifest[];
  errors: ManifestError[];
  files: number;
}

export class SourceError extends Error {}

const looksLikeUrl = (s: string) => /^[a-z][a-z0-9+.-]*:\/\//i.test(s) || /^[^/]+@[^:]+:/.test(s) || s.endsWith('.git');

/** Credentials never reach a report or an annotation. */
function withoutCredentials(url: string): string {
  return url.replace(/\/\/[^/@]+@/, '//');
}

export async function loadSource(opts: SourceOptions): Promise<LoadedSource> {
  const sub = opts.path ?? '.';
  if (opts.ref === undefined && !looksLikeUrl(opts.source)) {
    const root = resolve(opts.source);
    const loaded = await readManifests(root, join(root, sub));
    const revision = await simpleGit(root)
      .revparse(['HEAD'])
      .then((r) => r.trim())
      .catch(() => undefined);
    const id = opts.sourceId ?? (sub === '.' ? basename(root) : `${basename(root)}/${sub}`);
    return { id, description: root, ...(revision ? { revision } : {}), ...loaded };
  }
  const dir = await mkdtemp(join(tmpdir(), 'teamkeys-source-'));
  try {
    try {
      await simpleGit().clone(opts.source, dir, ['--quiet', '--no-checkout']);
      const repo = simpleGit(dir);
      await repo.checkout(opts.ref ?? 'HEAD');
      const revision = (await repo.revparse(['HEAD'])).trim();
      const url = withoutCredentials(opts.source);
      const loaded = await readManifests(dir, join(dir, sub));
      const id = opts.sourceId ?? (sub === '.' ? url : `${url}//${sub}`);
      return { id, revision, description: `${url}@${opts.ref ?? 'HEAD'}`, ...loaded };
    } catch (err) {
      const why = err instanceof Error ? err.message.split('\n')[0] : String(err);
      throw new SourceError(`cannot read git source ${withoutCredentials(opts.source)}${opts.ref ? ` at ${opts.ref}` : ''}: ${why}`);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
