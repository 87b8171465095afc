/** The esbuild options both bundles share (the CLI's, scripts/bundle-cli.mjs, and the Action's, scripts/build-action.mjs). */
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('..', import.meta.url));

export const nodeBundle = {
  // Paths in the output are relative to this: the same bytes from any working directory.
  absWorkingDir: root,
  // node_modules may be a link (git worktrees share one install): paths in the bundle must not depend on it.
  preserveSymlinks: true,
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'esm',
  // CommonJS dependencies call require(); an ES module has none of its own.
  banner: { js: "import { createRequire as __teamkeysCreateRequire } from 'node:module';\nconst require = __teamkeysCreateRequire(import.meta.url);" },
  // Whitespace and syntax only: names stay, so a stack trace still reads.
  minifyWhitespace: true,
  minifySyntax: true,
  legalComments: 'none',
  sourcemap: false,
  metafile: true,
  logLevel: 'warning',
};
