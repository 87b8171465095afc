/**
 * Files of this package (package.json, schemas/, the built worker threads) by their path from the
 * package's root. The CLI runs as a bundle (scripts/bundle-cli.mjs) whose shared chunks sit at
 * another depth than the modules they hold, so a path relative to a module's own URL would point
 * elsewhere there: the root is the nearest folder above this module holding teamkeys' package.json,
 * from the sources, the compiled tree and the bundle alike.
 */
import { readFileSync } from 'node:fs';

let root: URL | undefined;

function packageRoot(): URL {
  if (root) return root;
  for (let dir = new URL('.', import.meta.url); ; dir = new URL('..', dir)) {
    try {
      if ((JSON.parse(readFileSync(new URL('package.json', dir), 'utf8')) as { name?: unknown }).name === 'teamkeys') return (root = dir);
    } catch {
      // No package.json here, or another's that is not JSON: look further up.
    }
    if (new URL('..', dir).href === dir.href) throw new Error(`teamkeys: no package.json of teamkeys above ${import.meta.url}`);
  }
}

/** The URL of `path` (from the package's root: `schemas/team.schema.json`). */
export function packageFile(path: string): URL {
  return new URL(path, packageRoot());
}

/** The package's version, from its package.json. */
export function packageVersion(): string {
  return String((JSON.parse(readFileSync(packageFile('package.json'), 'utf8')) as { version?: unknown }).version);
}
