/**
 * `teamkeys import`: live objects as manifests a repository can start from. Each keeps what its
 * owner wrote (name, labels, annotations, spec) and drops what the server sets (uid, versions,
 * timestamps, managedFields, status) and every secret (the key, connectorData, OIDC tokens), so
 * that applying the files adopts the objects without changing a field.
 */
import { valueSetByAnnotation } from '../api/key-types.js';
import { lastAppliedAnnotation } from '../api/last-applied.js';
import { isFederatedKey, isLoginKey } from '../api/key-types.js';
import { stringify } from 'yaml';
import { servedPlurals } from '../api/resources.js';
import { secretFieldPaths } from '../api/secret-fields.js';
import type { KubeObject } from '../api/types.js';
import type { ApiClient, Plural } from '../client/types.js';
import { annotations } from './plan/annotations.js';

/**
 * Client annotations that describe a previous writer, not the object; key-delivered is the
 * reconciler's record of a delivery (validate refuses it in git), which every key made by
 * `apply --key-dir` carries; value-set-by is the server's record of who set a key's value.
 */
const droppedAnnotations = [annotations.source, annotations.keyDelivered, lastAppliedAnnotation, valueSetByAnnotation];
const secretSpecFields = secretFieldPaths().filter((p) => p.startsWith('spec.')).map((p) => p.split('.').slice(1));

export interface ImportedFile {
  /** `teams/NAME.yaml`, `ownedaccesskeys/NAME.yaml`. */
  path: string;
  text: string;
}

export interface ImportResult {
  files: ImportedFile[];
  /** Objects left out, with why. */
  skipped: { kind: string; name: string; reason: string }[];
}

function deleteIn(obj: Record<string, unknown>, path: string[]): void {
  const [head, ...rest] = path;
  const child = obj[head!];
  if (rest.length === 0) delete obj[head!];
  else if (child && typeof child === 'object') deleteIn(child as Record<string, unknown>, rest);
}

/** The manifest of one live object: what its owner wrote, nothing the server set, no secret. */
export function manifestOf(live: KubeObject): KubeObject {
  const metadata: KubeObject['metadata'] = { name: live.metadata.name! };
  if (live.metadata.labels && Object.keys(live.metadata.labels).length > 0) metadata.labels = { ...live.metadata.labels };
  const kept = Object.entries(live.metadata.annotations ?? {}).filter(([k]) => !droppedAnnotations.includes(k));
  if (kept.length > 0) metadata.annotations = Object.fromEntries(kept);
  const spec = structuredClone(live.spec ?? {}) as Record<string, unknown>;
  for (const path of secretSpecFields) deleteIn(spec, path);
  return { apiVersion: live.apiVersion, kind: live.kind, metadata, spec };
}

/** Reads every object of every served kind and renders those no GitOps source manages (all of them with `all`). */
export async function importObjects(client: ApiClient, opts: { all: boolean }): Promise<ImportResult> {
  const result: ImportResult = { files: [], skipped: [] };
  for (const plural of servedPlurals) {
    for (const live of await client.list(plural)) {
      const name = live.metadata.name!;
      const managedBy = live.metadata.annotations?.[annotations.source];
      if (isLoginKey(live)) result.skipped.push({ kind: live.kind, name, reason: 'a Login key: made by signing in, not kept in git' });
      else if (isFederatedKey(live)) result.skipped.push({ kind: live.kind, name, reason: 'a Federated key: minted for a CI job by a FederatedCredential, not kept in git' });
      else if (live.metadata.deletionTimestamp) result.skipped.push({ kind: live.kind, name, reason: 'being deleted' });
      else if (managedBy && !opts.all) result.skipped.push({ kind: live.kind, name, reason: `managed by GitOps source ${managedBy} (--all imports it too)` });
      else result.files.push({ path: `${plural}/${name}.yaml`, text: `# Imported from ${client.target} by teamkeys import.\n${stringify(manifestOf(live))}` });
    }
  }
  return result;
}
