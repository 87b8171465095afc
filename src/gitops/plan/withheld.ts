/**
 * Live values a pull request may not see. A plan on a pull request is posted where its author
 * reads it, and runs with the CI's token: a manifest naming any existing object (with
 * `sync-strategy: replace`, every live field differs) would otherwise read that object's fields,
 * their values and who wrote them. So, in pull-request mode, a change shows its live value only
 * for a field the manifest itself names; for the rest only the path is shown.
 */
import { isJsonMap } from '../../api/types.js';
import type { FieldChange } from './diff.js';
import type { PlanStep } from './plan.js';
import type { PlannedRotation } from './rotation.js';

/**
 * Whether `obj` holds the field at a dotted report path (`spec.users`,
 * `metadata.labels.app.kubernetes.io/name`): keys may hold dots, so each key of the object that
 * starts the path is tried.
 */
export function holdsPath(obj: unknown, path: string): boolean {
  if (path === '') return obj !== undefined;
  if (!isJsonMap(obj)) return false;
  return Object.keys(obj).some((k) => (path === k ? obj[k] !== undefined : path.startsWith(`${k}.`) && holdsPath(obj[k], path.slice(k.length + 1))));
}

/** A change with what it would tell of the live object removed: its path and whether it is drift stay. */
function withheld(c: FieldChange): FieldChange {
  return { path: c.path, drift: c.drift, withheld: true };
}

/** The action with the live values of fields its manifest does not name withheld (creates and deletes show none). */
export function withholdUnnamed(first: PlanStep, manifest: unknown): PlanStep {
  // A planned rotation tells the live value's age and whether an earlier rotation awaits
  // confirmation: the pull request is told only that the key would be rotated if due.
  const rotated = first.rotation ? { ...first, rotation: withheldRotation(first.rotation) } : first;
  // A skip's reason may quote the live object (the source managing it): the pull request reads its own words only.
  const { reasonWithheld, ...rest } = rotated;
  const action = reasonWithheld !== undefined ? { ...rest, reason: reasonWithheld } : rotated;
  if (action.type !== 'update' && action.type !== 'replace' && action.type !== 'skip') return action;
  if (!action.changes.some((c) => !holdsPath(manifest, c.path))) return action;
  return { ...action, changes: action.changes.map((c) => (holdsPath(manifest, c.path) ? c : withheld(c))) };
}

function withheldRotation(r: PlannedRotation): PlannedRotation {
  const { ageSeconds: _age, reason, ...rest } = r;
  return { ...rest, reason: reason === 'moved' ? 'moved' : 'due', withheld: true };
}
