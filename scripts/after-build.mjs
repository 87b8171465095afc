#!/usr/bin/env node
/**
 * Runs after tsc: makes the CLI executable and records what was built (`teamkeys version`):
 * the package version and the git commit of the tree it was built from, or "unknown" when the
 * build ran outside git (a source tarball, an install from a packed file).
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));

function git(...args) {
  try {
    return execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return '';
  }
}

// Only the repository this package is the top of: a tarball unpacked inside some other work tree
// (node_modules of a project in git) must not claim that project's commit.
const top = git('rev-parse', '--show-toplevel');
const inOwnRepo = top !== '' && fileURLToPath(new URL(`file://${top}/`)) === root;
const commit = (inOwnRepo && git('rev-parse', 'HEAD')) || 'unknown';
const dirty = inOwnRepo && commit !== 'unknown' && git('status', '--porcelain', '--untracked-files=no') !== '';
const { version } = JSON.parse(readFileSync(`${root}package.json`, 'utf8'));

chmodSync(`${root}dist/cli/main.js`, 0o755);
writeFileSync(`${root}dist/build-info.json`, `${JSON.stringify({ version, commit, dirty }, null, 2)}\n`);
