/**
 * What `teamkeys scan` does: reads each file (folders recursively, `-` for stdin), finds key values
 * in the format with a matching checksum, and prints `file:line:col: ...` for each, never the value.
 * With --server, each key is named when the caller's key may list it: the CLI sends only the value's
 * SHA-256 (a `keyHash` field selector), so the value never leaves the machine.
 */
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { findKeys } from '../../api/key-scan.js';
import { hashKey } from '../../api/secrets.js';
import { ClientError } from '../../client/types.js';
import { CliError } from '../errors.js';
import type { TargetFlags } from '../gitops-flags.js';
import { append } from '../../gitops/append.js';

export type ScanFlags = Pick<TargetFlags, 'server' | 'tokenFile' | 'caFile' | 'apiGroup'>;

/** Folders a scan of a tree never enters: history and installed packages are not the tree. */
const skippedFolders = new Set(['.git', 'node_modules']);

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The files a path stands for, in a stable order. */
async function filesOf(path: string): Promise<string[]> {
  if (path === '-') return ['-'];
  const info = await stat(path).catch(() => {
    throw new CliError(`the path "${path}" does not exist`);
  });
  if (!info.isDirectory()) return [path];
  const out: string[] = [];
  for (const entry of (await readdir(path, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    if (entry.isDirectory() && skippedFolders.has(entry.name)) continue;
    const full = join(path, entry.name);
    if (entry.isDirectory()) append(out, await filesOf(full));
    else if (entry.isFile()) out.push(full);
  }
  return out;
}

/** Names the keys the caller may list, by hash; an empty map without --server. */
async function namesOf(hashes: string[], f: ScanFlags): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  if (!f.server || hashes.length === 0) return names;
  const { openClient } = await import('../gitops-flags.js');
  const { HttpClient } = await import('../../client/http.js');
  const client = await openClient(f);
  try {
    if (!(client instanceof HttpClient)) return names;
    for (const hash of new Set(hashes)) {
      // A caller who may not list keys at all learns no names, as one who may not read this one.
      const [key] = await client.list('ownedaccesskeys', `keyHash=${hash}`).catch((err: unknown) => {
        if (err instanceof ClientError && err.code === 403) return [];
        throw err;
      });
      if (key?.metadata.name) names.set(hash, key.metadata.name);
    }
  } finally {
    await client.close();
  }
  return names;
}

export async function runScan(paths: string[], f: ScanFlags): Promise<number> {
  const found: { where: string; hash: string }[] = [];
  for (const file of (await Promise.all(paths.map(filesOf))).flat()) {
    const text =
      file === '-'
        ? await readStdin()
        : await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
            throw new CliError(`cannot read ${file}: ${err.code ?? err.message}`);
          });
    const label = file === '-' ? '<stdin>' : file;
    for (const k of findKeys(text)) found.push({ where: `${label}:${k.line}:${k.column}`, hash: hashKey(k.value) });
  }
  const names = await namesOf(found.map((k) => k.hash), f);
  for (const k of found) {
    const name = names.get(k.hash);
    console.log(`${k.where}: a teamkeys access key${name ? ` (ownedaccesskey "${name}")` : ''}; revoke it (POST /auth/revoke) or rotate it, and remove it from the file`);
  }
  if (found.length > 0) console.error(`${found.length} access key${found.length === 1 ? '' : 's'} found`);
  return found.length > 0 ? 1 : 0;
}
