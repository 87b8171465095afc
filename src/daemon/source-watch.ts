/**
 * What the daemon watches of a folder source: what the reader reads (gitops/source/files.ts) and
 * nothing else. A link is never followed (a pull request's `evil -> /usr` would otherwise have
 * chokidar crawl and watch all of /usr); the reader follows a link only to inside the source,
 * which is watched there anyway. Hidden entries are skipped, as the reader skips them, and a file
 * that is not a manifest (*.yaml, *.yml, *.json) is not watched.
 */
import type { Stats } from 'node:fs';
import { relative, sep } from 'node:path';
import type { ChokidarOptions } from 'chokidar';
import { isManifestPath } from '../gitops/source/files.js';

/** chokidar's options for watching the folder source `folder`. */
export function watchOptions(folder: string): ChokidarOptions {
  return {
    ignoreInitial: true,
    followSymlinks: false,
    ignored: (path: string, stats?: Stats) => {
      const rel = relative(folder, path).split(sep).join('/');
      if (rel === '') return false;
      if (rel.split('/').some((part) => part.startsWith('.'))) return true;
      // A link is seen as itself: a link to a folder is one entry, not a tree to crawl.
      return stats !== undefined && !stats.isDirectory() && !isManifestPath(rel);
    },
  };
}
