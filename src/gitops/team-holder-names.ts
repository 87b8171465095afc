/**
 * A key's user or subject, or a FederatedCredential's user, named like a team's keys
 * (`team:<name>`) is refused by the server where it is new: as the server does, the reconciler
 * judges it against the live object of that name, so a repository that declares a key stored so
 * before the rule still applies (a review found every reconcile of such a repository refused).
 */
import { fieldErrorBody } from '../api/field-errors.js';
import { holderNameErrors } from '../api/names.js';
import type { KubeObject } from '../api/types.js';
import type { Plural } from '../client/types.js';
import type { ManifestError } from './source/manifests.js';
import type { DesiredObject } from './validate.js';

/**
 * Offline (`teamkeys validate`, which reads no server): each such name as a warning, since only the
 * live object can say whether it is new (plan and apply refuse it then).
 */
export function teamHolderNameWarnings(desired: DesiredObject[]): ManifestError[] {
  return teamHolderNames(desired, {}).map((e) => ({ ...e, message: `${e.message} (unless the server's object of this name already has it: plan judges it against the live object)` }));
}

/** The manifests that would give a new name of that form, as errors at the field. */
export function teamHolderNames(desired: DesiredObject[], live: Partial<Record<Plural, KubeObject[]>>): ManifestError[] {
  const byName = new Map<Plural, Map<string, KubeObject>>();
  const liveOf = (plural: Plural, name: string) => {
    if (!byName.has(plural)) byName.set(plural, new Map((live[plural] ?? []).map((o) => [o.metadata.name!, o])));
    return byName.get(plural)!.get(name);
  };
  return desired.flatMap((d) =>
    holderNameErrors(d.obj.kind!, d.obj, liveOf(d.plural, d.obj.metadata.name!)).map((e) => ({ ...d.manifest.locate(e.field), message: `${e.field}: ${fieldErrorBody(e)}` })),
  );
}
