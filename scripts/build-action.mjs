#!/usr/bin/env node
/**
 * Bundles the GitHub Action into one committed file, dist-action/index.mjs, so a runner starts it
 * without npm ci. The JSON Schemas are inlined (src/api/schema/files.ts is replaced), and the
 * embedded store's native module must not be reachable: the build fails if it is.
 * Usage: node scripts/build-action.mjs [--outfile FILE]   (CI rebuilds and compares the bytes)
 */
import { readdirSync, readFileSync } from 'node:fs';
import { build } from 'esbuild';
import { nodeBundle, root } from './esbuild-node.mjs';
const at = process.argv.indexOf('--outfile');
const outfile = at > 0 ? process.argv[at + 1] : `${root}dist-action/index.mjs`;

const schemas = Object.fromEntries(
  readdirSync(`${root}schemas`)
    .filter((f) => f.endsWith('.schema.json'))
    .sort()
    .map((f) => [f, readFileSync(`${root}schemas/${f}`, 'utf8')]),
);

/** The schema reader, with the files' text in the bundle instead of on disk beside it. */
const inlineSchemas = {
  name: 'inline-schemas',
  setup(b) {
    b.onLoad({ filter: /src[\\/]api[\\/]schema[\\/]files\.ts$/ }, () => ({
      loader: 'js',
      contents: `const files = ${JSON.stringify(schemas)};\nexport function readSchemaFile(name) {\n  if (!(name in files)) throw new Error('no schema ' + name);\n  return files[name];\n}\n`,
    }));
  },
};

const result = await build({
  ...nodeBundle,
  entryPoints: [`${root}src/github-action/main.ts`],
  outfile,
  plugins: [inlineSchemas],
});

// The npm package `bindings` (a native-module loader), not a source file whose name holds the word.
const native = Object.keys(result.metafile.inputs).filter((f) => /better-sqlite3|[\\/]pg[\\/]|[\\/]node_modules[\\/]bindings[\\/]/.test(f));
if (native.length > 0) {
  console.error(`the Action's bundle must not contain the embedded store, but it reaches: ${native.join(', ')}`);
  process.exit(1);
}
