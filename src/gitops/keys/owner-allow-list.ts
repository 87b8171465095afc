/**
 * Which GitHub owners a source may deliver keys to (key-secret): a merged change must not send a
 * key to `github:someone-else/...`. The list is the Action's key-secret-owners input, by default
 * the owner of the repository the workflow runs in; elsewhere the owner in the source's id when
 * it is a github.com repository. A plan names the list; a key-secret outside it is refused at its
 * file:line. file: sinks stay in the key folder and are not concerned.
 */
import type { ManifestError } from '../source/manifests.js';
import type { DesiredObject } from '../validate.js';
import { annotations } from '../plan/annotations.js';
import { parseSecretTarget } from './sinks.js';

/** The owners a source id names by default (`github.com/acme/teams/gitops` -> acme), or undefined. */
export function ownersFromSourceId(id: string): string[] | undefined {
  const m = /^github\.com\/([A-Za-z0-9-]+)\//.exec(id);
  return m ? [m[1]!] : undefined;
}

/** The key-secret-owners input: comma or space separated owner names. */
export function parseOwners(value: string): string[] {
  return value.split(/[\s,]+/).filter(Boolean);
}

/** Each desired key whose key-secret names a GitHub owner outside `owners`, at its annotation. */
export function keySecretOwnerErrors(desired: DesiredObject[], owners: string[]): ManifestError[] {
  const allowed = new Set(owners.map((o) => o.toLowerCase()));
  const errors: ManifestError[] = [];
  for (const d of desired) {
    const value = d.plural === 'ownedaccesskeys' ? d.obj.metadata.annotations?.[annotations.keySecret] : undefined;
    const target = value === undefined ? undefined : parseSecretTarget(value);
    if (target === undefined || typeof target === 'string' || target.type === 'file') continue;
    const owner = target.type === 'org' ? target.org : target.owner;
    if (allowed.has(owner.toLowerCase())) continue;
    errors.push({
      ...d.manifest.locate(`metadata.annotations[${annotations.keySecret}]`),
      message: `${annotations.keySecret} ${value} goes to ${owner}, which is not among the owners this source may deliver keys to (${owners.join(', ') || 'none'}): add it to key-secret-owners if that is intended`,
    });
  }
  return errors;
}
