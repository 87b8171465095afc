/** Throwaway git repositories for the reconciler tests, made with the real git through simple-git. */
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { simpleGit, type SimpleGit } from 'simple-git';
import { root } from '../support/cli.js';

export interface Repo {
  dir: string;
  git: SimpleGit;
  write(path: string, text: string): void;
  remove(path: string): void;
  commit(message: string): Promise<string>;
  cleanup(): void;
}

export async function newRepo(opts: { withExamples?: boolean } = {}): Promise<Repo> {
  const dir = mkdtempSync(join(tmpdir(), 'teamkeys-repo-'));
  if (opts.withExamples !== false) cpSync(join(root, 'examples/gitops'), dir, { recursive: true });
  const git = simpleGit(dir);
  await git.init(['--initial-branch=main']);
  await git.addConfig('user.email', 'test@teamkeys.dev').addConfig('user.name', 'teamkeys test').addConfig('commit.gpgsign', 'false');
  const repo: Repo = {
    dir,
    git,
    write: (path, text) => {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), text);
    },
    remove: (path) => rmSync(join(dir, path), { recursive: true, force: true }),
    commit: async (message) => {
      await git.add(['-A']);
      await git.commit(message, ['--allow-empty']);
      return (await git.revparse(['HEAD'])).trim();
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
  await repo.commit('initial');
  return repo;
}
