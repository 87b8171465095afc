/**
 * better-sqlite3's native binary for an `npm install` a test makes (a fresh clone, the packed
 * tarball). The binary this checkout's own install built is packed the way its prebuilt downloads
 * are and named as prebuild-install looks for it; an install pointed at the folder takes it as a
 * newcomer's takes the download (the README: Linux with glibc, macOS, Windows), rather than
 * compiling SQLite again for a minute: this machine reaches no GitHub release, the tests reach
 * nothing beyond loopback, and .ci/run's own `npm ci` has just taken the compiling path.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { root } from './cli.js';

export interface LocalPrebuild {
  /** npm's settings for the install, as environment: prebuild-install reads the folder from it. */
  env: Record<string, string>;
}

/** Packs the binary into `<dir>/prebuilds`. */
export function localPrebuild(dir: string): LocalPrebuild {
  const sqliteDir = join(root, 'node_modules/better-sqlite3');
  const version = (JSON.parse(readFileSync(join(sqliteDir, 'package.json'), 'utf8')) as { version: string }).version;
  const prebuilds = join(dir, 'prebuilds');
  mkdirSync(prebuilds);
  // prebuild-install's name (its util.js): glibc Linux has no libc part.
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  const packed = spawnSync('tar', ['czf', join(prebuilds, name), '-C', sqliteDir, 'build/Release/better_sqlite3.node'], { encoding: 'utf8' });
  if (packed.status !== 0) throw new Error(`could not pack this checkout's better-sqlite3 binary: ${packed.stderr}`);
  return { env: { npm_config_better_sqlite3_local_prebuilds: prebuilds } };
}

/** True when the better-sqlite3 installed under `project` was compiled there (node-gyp leaves its objects) rather than taken prebuilt. */
export function compiledSqlite(project: string): boolean {
  return existsSync(join(project, 'node_modules/better-sqlite3/build/Release/obj.target'));
}
