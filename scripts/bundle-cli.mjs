#!/usr/bin/env node
/**
 * Bundles the CLI, after tsc, over tsc's dist/cli/main.js and the two worker threads' entry points
 * (dist/store/backends/sqlite-worker.js, dist/server/yaml-worker.js), with their shared code in
 * dist/chunks/. Node resolves and compiles each ES module and CommonJS file on its own: the
 * unbundled tree is about 300 files for `teamkeys validate` and 1,000 for `teamkeys serve`, and a
 * start spent most of its time there (validate 155 ms against 125 ms bundled, serve ready in 650 ms
 * against 400 ms; docs/performance.md, "CLI start"). Commands stay loaded on demand (splitting
 * keeps each dynamic import its own chunk). Native modules and what loads them stay in
 * node_modules. The rest of dist/ is tsc's, as before (the tests read some of it); the package ships
 * the bundle alone (package.json `files`). Nothing is printed: `npm pack --json` runs this. A dependency imported with import() must be
 * an ES module, or give its exports as `.default`: in the bundle a CommonJS package imported that
 * way has no named exports (its exports object is the default, as esbuild reads Node's rules).
 */
import { rmSync, writeFileSync } from 'node:fs';
import { build } from 'esbuild';
import { nodeBundle, root } from './esbuild-node.mjs';

/** The entry points, from src/ and in dist/: the CLI and the worker threads. */
const entries = ['cli/main', 'store/backends/sqlite-worker', 'server/yaml-worker'];
/** Packages with native code (or that load it by path at run time): required from node_modules. */
const external = ['better-sqlite3', 'bindings', 'pg', 'pg-native'];

// Chunks are named by their content's hash: those of an earlier build would stay beside the new ones.
rmSync(`${root}dist/chunks`, { recursive: true, force: true });

const result = await build({
  ...nodeBundle,
  entryPoints: entries.map((e) => `src/${e}.ts`),
  outbase: 'src',
  outdir: 'dist',
  entryNames: '[dir]/[name]',
  chunkNames: 'chunks/[name]-[hash]',
  splitting: true,
  external,
});

/** The package a bundled input came from (`@scope/name` or `name`), or none for this project's own code. */
function packageOf(input) {
  const at = input.lastIndexOf('node_modules/');
  if (at < 0) return undefined;
  const [first, second] = input.slice(at + 'node_modules/'.length).split('/');
  return first.startsWith('@') ? `${first}/${second}` : first;
}

// Which packages each output file holds, for the test that proves a command loads only what it
// needs (test/cli/lazy-start.test.ts): inside the bundle a package is a chunk, not a name to resolve.
const outputs = Object.fromEntries(
  Object.entries(result.metafile.outputs).map(([file, { inputs }]) => [file, [...new Set(Object.keys(inputs).map(packageOf).filter(Boolean))].sort()]),
);
writeFileSync(`${root}dist/bundle-packages.json`, `${JSON.stringify(outputs, null, 1)}\n`);
// tsc's source maps of the files the bundle wrote over would map its lines to other code.
for (const entry of entries) rmSync(`${root}dist/${entry}.js.map`, { force: true });
