/** Expands -f arguments: files as given, directories to the YAML and JSON files below them. */
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { CliError } from './errors.js';

const manifestFile = /\.(ya?ml|json)$/i;

export async function expandFiles(paths: string[]): Promise<string[]> {
  const out: string[] = [];
  for (const path of paths) {
    const info = await stat(path).catch(() => {
      throw new CliError(`the path "${path}" does not exist`);
    });
    if (!info.isDirectory()) {
      out.push(path);
      continue;
    }
    const entries = await readdir(path, { recursive: true, withFileTypes: true });
    out.push(
      ...entries
        .filter((e) => e.isFile() && manifestFile.test(e.name))
        .map((e) => join(e.parentPath, e.name))
        .sort(),
    );
  }
  return out;
}
