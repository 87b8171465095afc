/**
 * A saved plan made in pull-request mode (the Action on an untrusted event) holds no more of the
 * live objects than the report shows: it is written for review, never applied. A replace's body is
 * the live object with git's fields laid over it (its managedFields, uid, timestamps, and the live
 * values of ignored fields), an update's patch can carry live list items, and a read's digest
 * would let one confirm a guess of a live value; all are left out. Creates keep their body (git's
 * object), every action keeps its type, changes (already withheld) and location.
 */
import type { PlanStep } from '../plan/plan.js';
import type { ObjectRead } from './saved-plan.js';

/** Why such a plan is not applied, as apply --plan (and the Action's plan-file) says it. */
export const withheldPlanRefusal =
  'the plan was saved in pull-request mode (live values withheld, as in its report): it is for review and is never applied; plan again on a trusted event (push, schedule) and apply that plan';

/** The action as a pull request's saved plan holds it. */
export function withheldAction(a: PlanStep): PlanStep {
  const { body, patch: _patch, preconditions: _preconditions, ...rest } = a;
  return { ...rest, ...(a.type === 'create' && body ? { body } : {}) };
}

/** A read as a pull request's saved plan holds it: whether the object was there, nothing of it. */
export function withheldRead(r: ObjectRead): ObjectRead {
  return { kind: r.kind, plural: r.plural, name: r.name, ...(r.absent ? { absent: true as const } : {}) };
}
