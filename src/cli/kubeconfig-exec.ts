/**
 * The kubeconfig entry `teamkeys login --kubeconfig F` writes: a cluster for the server, a user that
 * runs `teamkeys credential` (kubectl's exec plugin), and a context joining them, made current.
 * Entries of other names in F are kept; entries of the same name are replaced.
 */
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { parse, stringify } from 'yaml';
import { apiRoot } from '../api/resources.js';

type Named = { name: string } & Record<string, unknown>;
interface Kubeconfig {
  clusters?: Named[];
  users?: Named[];
  contexts?: Named[];
  [key: string]: unknown;
}

const upsert = (list: Named[] | undefined, entry: Named) => [...(list ?? []).filter((e) => e.name !== entry.name), entry];

/** The name of the cluster, user and context for a server: teamkeys-<host>-<port>. */
export function entryName(server: string): string {
  const url = new URL(apiRoot(server));
  return `teamkeys-${url.hostname.replace(/[[\]]/g, '')}-${url.port || (url.protocol === 'https:' ? '443' : '80')}`;
}

export async function writeExecKubeconfig(path: string, server: string, caFile: string | undefined): Promise<string> {
  const name = entryName(server);
  const config: Kubeconfig = existsSync(path) ? ((parse(readFileSync(path, 'utf8')) as Kubeconfig | null) ?? {}) : {};
  const cluster: Record<string, string> = { server: apiRoot(server) };
  if (caFile) cluster['certificate-authority-data'] = readFileSync(caFile).toString('base64');
  // The plugin runs this very CLI with this node, wherever they are installed; kubectl tells it the
  // cluster it calls (provideClusterInfo), so it hands the key to no other (credential.ts).
  const main = realpathSync(process.argv[1]!);
  const args = ['credential', '--server', apiRoot(server), ...(caFile ? ['--ca-file', resolve(caFile)] : [])];
  const exec = { apiVersion: 'client.authentication.k8s.io/v1', command: process.execPath, args: [main, ...args], interactiveMode: 'IfAvailable', provideClusterInfo: true };
  config.apiVersion ??= 'v1';
  config.kind ??= 'Config';
  config.clusters = upsert(config.clusters, { name, cluster });
  config.users = upsert(config.users, { name, user: { exec } });
  config.contexts = upsert(config.contexts, { name, context: { cluster: name, user: name } });
  config['current-context'] = name;
  // ~/.kube need not exist yet on a fresh machine (kubectl makes it the same way).
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  await writeFile(path, stringify(config), { mode: 0o600 });
  await chmod(path, 0o600);
  return name;
}
