/**
 * The ignore-fields annotation: field paths left out of diff and write. Two limits keep it from
 * hiding what a reviewer must see. The fields that define access (the schemas'
 * `x-teamkeys-authoritative` fields: a Team's users, groups, access, clusterRoles, owner, accessRequests; a key's
 * user, team, scope, disabled, ttl, ...) cannot be ignored: validate refuses such an entry at its
 * file:line. And the reconciler's own annotations (ignore-fields itself, sync-strategy, key-secret,
 * ...) are never ignored, whatever entry covers them (`metadata.annotations`), so adding or changing
 * one is always a change the plan shows.
 */
import type { ResourceModel } from '../../api/model.js';
import type { KubeObject } from '../../api/types.js';
import { disabledReasonAnnotation } from '../../api/key-notices.js';
import { disabledField, serverDisablerOf } from '../../api/server-disabled.js';
import { annotations } from './annotations.js';
import { valueSetByAnnotation } from '../../api/key-types.js';

const own = 'metadata.annotations.gitops.management.service/';
const delivered = `metadata.annotations.${annotations.keyDelivered}`;
const setBy = `metadata.annotations.${valueSetByAnnotation}`;

/** The entries of an object's ignore-fields annotation. */
export function ignoreFieldsList(obj: KubeObject | undefined): string[] {
  // Read before the schema is checked too (validate): anything but a string is no list.
  const value: unknown = obj?.metadata?.annotations?.[annotations.ignoreFields];
  return (typeof value === 'string' ? value : '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

const covers = (entry: string, dotted: string) => dotted === entry || dotted.startsWith(`${entry}.`) || entry.startsWith(`${dotted}.`);

/** Whether a dotted field path is left out of diff and write for this object. */
export function ignoredFields(obj: KubeObject | undefined): (dotted: string) => boolean {
  const list = ignoreFieldsList(obj);
  // The reconciler's own record of a delivered key, and the server's of who set a key's value, are
  // never in git, and never drift. They are matched exactly: unlike a user's ignore-fields entry,
  // they must not hide the annotations around them.
  // The containers of the reconciler's annotations (metadata, metadata.annotations) are not ignored
  // whole either: their other members are, one by one.
  const reconcilers = (dotted: string) => dotted.startsWith(own) || own.startsWith(`${dotted}.`);
  return (dotted) => dotted === delivered || dotted === setBy || (!reconcilers(dotted) && list.some((f) => covers(f, dotted)));
}

/** The settings whose change a plan shows on its own, beside the object's other changes. */
export const settingPaths: Record<string, string> = {
  [`metadata.annotations.${annotations.ignoreFields}`]: 'ignore-fields',
  [`metadata.annotations.${annotations.syncStrategy}`]: 'sync-strategy',
};

/** Each ignore-fields entry that would hide a field defining access, with that field. */
export function accessFieldsIgnored(model: ResourceModel, obj: KubeObject): { entry: string; field: string }[] {
  const access = model.authoritativePaths.map((names) => names.join('.'));
  return ignoreFieldsList(obj).flatMap((entry) => {
    // `spec.access[0].teams` is inside spec.access as much as `spec.access.teams` is.
    const dotted = entry.replace(/\[[^\]]*\]/g, '.item');
    const field = access.find((f) => covers(dotted, f));
    return field ? [{ entry, field }] : [];
  });
}

/** The server's field manager owning spec.disabled (a disabling write the reason did not fit in), as a reason. */
function serverDisabler(live: KubeObject): string | undefined {
  const server = serverDisablerOf(live, disabledField);
  return server && `field manager ${server.manager}`;
}

/**
 * Why git's `spec.disabled` is held back on a key, or undefined: the live key was disabled by the
 * server for a reason (a leak report, the unused-key rule: `management.service/disabled-reason`, or,
 * where the reason did not fit in the annotations, the server's field manager owning the field),
 * and git would enable it. Re-enabling stays a person's act (after rotating a leaked key, writing
 * spec.disabled: false by hand); left to the reconciler, the next apply would undo the revocation.
 */
export function heldDisabled(wanted: KubeObject, live: KubeObject): string | undefined {
  const disabled = (o: KubeObject) => (o.spec as { disabled?: unknown } | undefined)?.disabled === true;
  if (!disabled(live) || disabled(wanted)) return undefined;
  const reason: unknown = live.metadata.annotations?.[disabledReasonAnnotation];
  const why = typeof reason === 'string' && reason !== '' ? `${disabledReasonAnnotation}: ${reason}` : serverDisabler(live);
  return why && `held disabled by the server (${why}); git's spec.disabled applies once a person enables the key (spec.disabled: false)`;
}
