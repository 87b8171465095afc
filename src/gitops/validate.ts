/**
 * Validation of manifests before anything is planned: kind, schema (unknown fields refused),
 * names, duplicates, secrets in plain text, the roles and verbs of grants (team-references.ts
 * checks what needs live state).
 * Every finding is `file:line:col: message` at the offending field; any finding means no write.
 */
import { valueSetByAnnotation } from '../api/key-types.js';
import { decodeObject } from '../api/decode.js';
import { unknownGrants } from '../api/grant-vocabulary.js';
import { ApiError } from '../api/errors.js';
import { fieldErrorBody, shownName } from '../api/field-errors.js';
import type { DeclaredModel } from '../api/model.js';
import { pruneUnknownFields } from '../api/schema/walk.js';
import { secretFieldPaths } from '../api/secret-fields.js';
import { isFederatedKey, isLoginKey } from '../api/key-types.js';
import { isJsonMap, type KubeObject } from '../api/types.js';
import { validateObject } from '../api/validate.js';
import type { Plural } from '../client/types.js';
import { durationMs, formatDuration } from '../duration.js';
import { parseSecretTarget, sinkIdentity } from './keys/sinks.js';
import { accessFieldsIgnored } from './plan/ignore-fields.js';
import { annotations, defaultRotationOverlapMs, keyDirSink, maxRotationOverlapMs, minRotateEveryMs } from './plan/annotations.js';
import type { Manifest, ManifestError } from './source/manifests.js';
import { teamHolderDetail } from '../api/names.js';

export interface DesiredObject {
  plural: Plural;
  obj: KubeObject;
  manifest: Manifest;
}

/** Fields the server sets; a manifest exported with kubectl get -o yaml may carry them. */
const serverMetadata = ['uid', 'resourceVersion', 'generation', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'managedFields', 'selfLink', 'namespace'];

function get(obj: unknown, dotted: string): unknown {
  let node = obj;
  for (const part of dotted.split('.')) node = isJsonMap(node) ? node[part] : undefined;
  return node;
}

export function validateManifests(manifests: Manifest[], models: DeclaredModel[]): { desired: DesiredObject[]; errors: ManifestError[] } {
  const desired: DesiredObject[] = [];
  const errors: ManifestError[] = [];
  const at = (m: Manifest, field: string | undefined, message: string) => errors.push({ ...(field ? m.locate(field) : m), message });
  const seen = new Map<string, Manifest>();
  const sinks = new Map<string, { name: string; at: Manifest; implicit: boolean }>();
  // Every kind's secrets, whatever kind the manifest claims: a secret is refused before its kind is judged.
  const secretFields = secretFieldPaths(models);
  for (const m of manifests) {
    const raw = m.object;
    const model = models.find((x) => x.info.kind === raw.kind && x.info.apiVersion === raw.apiVersion);
    if (!model) {
      const known = models.map((x) => `${x.info.kind} (${x.info.apiVersion})`).join(' or ');
      at(m, 'kind', `unknown kind ${JSON.stringify(raw.kind ?? '')} in ${JSON.stringify(raw.apiVersion ?? '')}: expected ${known}`);
      continue;
    }
    const before = errors.length;
    for (const field of secretFields) {
      if (get(raw, field) !== undefined) {
        at(m, field, `${field} must not be kept in git: it is a secret (${field === 'spec.key' ? `the server generates keys; --key-dir or the ${annotations.keySecret} annotation receives new ones` : 'the server stores it, never in a repository'})`);
      }
    }
    for (const { entry, field } of accessFieldsIgnored(model, raw as KubeObject)) {
      at(m, `metadata.annotations[${annotations.ignoreFields}]`, `${annotations.ignoreFields} may not name ${JSON.stringify(entry)}: ${field} defines access, so a change to it (drift included) is always shown and written`);
    }
    if (model.info.kind === 'OwnedAccessKey' && isLoginKey(raw)) at(m, 'spec.type', 'spec.type Login is for keys made by signing in (teamkeys login); they are not kept in git');
    if (model.info.kind === 'OwnedAccessKey' && isFederatedKey(raw)) at(m, 'spec.type', 'spec.type Federated is for keys the token exchange mints for a CI job; declare a FederatedCredential in git instead');
    const copy = structuredClone(raw);
    for (const unknown of pruneUnknownFields(model.schema, copy)) at(m, unknown, `unknown field "${shownName(unknown)}"`);
    let obj: KubeObject;
    try {
      // Unknown fields are reported above; the rest is checked without them, so every finding shows.
      obj = decodeObject(model, raw, { fieldValidation: 'Ignore' }).obj;
    } catch (err) {
      at(m, undefined, err instanceof ApiError ? err.message : String(err));
      continue;
    }
    for (const k of serverMetadata) delete (obj.metadata as Record<string, unknown>)[k];
    delete obj.status;
    if (!obj.metadata.name) {
      at(m, 'metadata', 'metadata.name is required: objects in git are matched to live ones by name (generateName cannot be)');
      continue;
    }
    // A user named like a team's keys is refused where it is new, so it is judged against the live
    // object once that is read (team-holder-names.ts): git may keep declaring a key stored so before.
    for (const e of validateObject(model, obj)) if (e.detail !== teamHolderDetail) at(m, e.field, `${e.field}: ${fieldErrorBody(e)}`);
    for (const [field, message] of [...keySecretErrors(model.info.kind, obj), ...rotationErrors(model.info.kind, obj)]) at(m, field, message);
    // The server accepts any role name and verb (roles for clusters elsewhere); in git one it does
    // not know is a typo, unless the Team lists it as a role of other clusters.
    if (model.info.kind === 'Team') {
      const elsewhere = (obj.metadata.annotations?.[annotations.otherClusterRoles] ?? '').split(',').map((r) => r.trim());
      for (const g of unknownGrants(obj)) {
        if (g.kind === 'clusterRole' && elsewhere.includes(g.word)) continue;
        at(m, g.field, `${g.message}${g.kind === 'clusterRole' ? ` (a role of other clusters: list it in the ${annotations.otherClusterRoles} annotation)` : ''}`);
      }
    }
    if (errors.length > before) continue;
    const id = `${model.info.kind}/${obj.metadata.name}`;
    const first = seen.get(id);
    if (first) {
      at(m, 'metadata.name', `duplicate ${id}: also defined at ${first.file}:${first.line}:${first.column}`);
      continue;
    }
    seen.set(id, m);
    // One sink, one key: two keys delivered to one secret would overwrite each other, and a holder
    // would read whichever came last (a rotation of either would kill the other's value there).
    // A key without key-secret goes to <name>.key in --key-dir (apply.ts): that file is its sink as
    // much as a declared one is, so no key may declare it (a review had key a declare file:b.key:
    // both were recorded delivered there, and b's value was lost).
    const declared = model.info.kind === 'OwnedAccessKey' ? obj.metadata.annotations?.[annotations.keySecret] : undefined;
    const sink = model.info.kind !== 'OwnedAccessKey' ? undefined : (declared ?? keyDirSink(obj.metadata.name!));
    const sinkKey = sink === undefined ? undefined : sinkIdentity(sink);
    const owner = sinkKey === undefined ? undefined : sinks.get(sinkKey);
    if (owner) {
      const whose = `OwnedAccessKey/${owner.name} (${owner.at.file}:${owner.at.line}:${owner.at.column}${owner.implicit ? `, its --key-dir file: it has no ${annotations.keySecret}` : ''})`;
      if (declared !== undefined) at(m, `metadata.annotations[${annotations.keySecret}]`, `${annotations.keySecret} ${sink} is also the sink of ${whose}: one sink holds one key's value`);
      else at(m, 'metadata.name', `without ${annotations.keySecret} this key's value goes to ${sink!.slice('file:'.length)} in --key-dir, which is also the sink of ${whose}: one sink holds one key's value`);
      continue;
    }
    if (sinkKey !== undefined) sinks.set(sinkKey, { name: obj.metadata.name!, at: m, implicit: declared === undefined });
    desired.push({ plural: model.info.plural, obj, manifest: m });
  }
  return { desired, errors };
}

/** The key-secret annotation names a valid target, on a key; key-delivered is the reconciler's alone. */
function keySecretErrors(kind: string, obj: KubeObject): [field: string, message: string][] {
  const a = obj.metadata.annotations ?? {};
  const field = (name: string) => `metadata.annotations[${name}]`;
  const errors: [string, string][] = [];
  if (a[annotations.keyDelivered] !== undefined) errors.push([field(annotations.keyDelivered), `${annotations.keyDelivered} is written by the reconciler once a key reached its secret; it does not belong in git`]);
  if (a[valueSetByAnnotation] !== undefined) errors.push([field(valueSetByAnnotation), `${valueSetByAnnotation} is written by the server when a key's value is set; it does not belong in git`]);
  const target = a[annotations.keySecret];
  if (target === undefined) return errors;
  if (kind !== 'OwnedAccessKey') errors.push([field(annotations.keySecret), `${annotations.keySecret} applies only to OwnedAccessKeys`]);
  else {
    const parsed = parseSecretTarget(target);
    if (typeof parsed === 'string') errors.push([field(annotations.keySecret), `${annotations.keySecret} ${parsed}`]);
  }
  return errors;
}

/**
 * The rotation schedule: valid durations, on a key whose value goes somewhere (a rotated value
 * nobody receives breaks every user of the key), an overlap shorter than the schedule.
 */
function rotationErrors(kind: string, obj: KubeObject): [field: string, message: string][] {
  const a = obj.metadata.annotations ?? {};
  const field = (name: string) => `metadata.annotations[${name}]`;
  const every = a[annotations.rotateEvery];
  const overlap = a[annotations.rotationOverlap];
  if (every === undefined && overlap === undefined) return [];
  if (kind !== 'OwnedAccessKey') return [[field(every !== undefined ? annotations.rotateEvery : annotations.rotationOverlap), `${every !== undefined ? annotations.rotateEvery : annotations.rotationOverlap} applies only to OwnedAccessKeys`]];
  const errors: [string, string][] = [];
  const syntax = 'a duration such as 30d, 12h or 90m';
  const everyMs = every === undefined ? undefined : durationMs(every.trim());
  if (every === undefined) errors.push([field(annotations.rotationOverlap), `${annotations.rotationOverlap} takes effect only with ${annotations.rotateEvery}: add it, or remove the overlap`]);
  else if (everyMs === undefined) errors.push([field(annotations.rotateEvery), `${annotations.rotateEvery} must be ${syntax}, not ${JSON.stringify(every)}`]);
  else if (everyMs < minRotateEveryMs) errors.push([field(annotations.rotateEvery), `${annotations.rotateEvery} must be at least ${formatDuration(minRotateEveryMs)}, not ${every}`]);
  else if (a[annotations.keySecret] === undefined) {
    errors.push([field(annotations.rotateEvery), `${annotations.rotateEvery} needs ${annotations.keySecret}: a rotated value that goes nowhere breaks every user of the key (name where it goes: github:OWNER/REPO/NAME, github-env:OWNER/REPO/ENVIRONMENT/NAME, github-org:ORG/NAME or file:PATH)`]);
  }
  if (overlap === undefined) {
    if (everyMs !== undefined && everyMs >= minRotateEveryMs && defaultRotationOverlapMs >= everyMs) {
      errors.push([field(annotations.rotateEvery), `${annotations.rotateEvery} ${every} is not longer than the default overlap ${formatDuration(defaultRotationOverlapMs)}: set ${annotations.rotationOverlap} shorter than it`]);
    }
    return errors;
  }
  const overlapMs = durationMs(overlap.trim());
  if (overlapMs === undefined || overlapMs % 1000 !== 0) errors.push([field(annotations.rotationOverlap), `${annotations.rotationOverlap} must be ${syntax} (whole seconds), not ${JSON.stringify(overlap)}`]);
  else if (overlapMs > maxRotationOverlapMs) errors.push([field(annotations.rotationOverlap), `${annotations.rotationOverlap} must be at most ${formatDuration(maxRotationOverlapMs)}, not ${overlap}`]);
  else if (everyMs !== undefined && overlapMs >= everyMs) errors.push([field(annotations.rotationOverlap), `${annotations.rotationOverlap} ${overlap} must be shorter than ${annotations.rotateEvery} ${every}: the previous value must stop working before the next rotation`]);
  return errors;
}
