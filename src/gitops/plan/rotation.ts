/**
 * Scheduled rotation, planned: a key annotated rotate-every whose value is older than that is
 * rotated; so is any key with a sink whose last rotation still awaits confirmation (its delivery
 * failed, the run died before it confirmed, or the schedule was removed since), since until it is
 * confirmed its previous value works with no deadline. Pure: the time comes in as a Date from the
 * caller's Clock.
 */
import { durationMs } from '../../duration.js';
import { isJsonMap, type KubeObject } from '../../api/types.js';
import type { DesiredObject } from '../validate.js';
import { annotations, defaultRotationOverlapMs } from './annotations.js';

export interface PlannedRotation {
  /**
   * due: the value is older than rotate-every; unconfirmed: an earlier rotation's delivery never
   * succeeded, so it is retried; moved: the key was delivered elsewhere (key-secret changed), so
   * the value its holders read is kept for the overlap, and the delivery is recorded once confirmed;
   * unrecorded: the same for a key whose first delivery may have happened but was never recorded
   * (key-delivered `pending:`).
   */
  reason: 'due' | 'unconfirmed' | 'moved' | 'unrecorded';
  /** The key-secret sink the new value goes to. */
  sink: string;
  /** The annotations' values as written in git (the overlap's default when unset; no rotate-every: a retry only). */
  rotateEvery?: string;
  overlap: string;
  overlapSeconds: number;
  /** How old the live value was when planned, in whole seconds; absent in a pull request's plan (a live fact). */
  ageSeconds?: number;
  /** A pull request's plan: the age and whether an earlier rotation awaits confirmation are withheld. */
  withheld?: true;
}

/** The server's record of the key's rotations (status.rotation), as far as planning reads it. */
interface RotationStatus {
  rotatedAt?: string;
  awaitingConfirmation?: boolean;
}

function rotationStatus(live: KubeObject): RotationStatus {
  const status = isJsonMap(live.status) ? live.status : {};
  return isJsonMap(status.rotation) ? (status.rotation as RotationStatus) : {};
}

/** The rotation status planning reads, and only that (a saved plan's digest holds it; key use rewrites the rest). */
export function plannedRotationStatus(live: KubeObject): RotationStatus {
  const { rotatedAt, awaitingConfirmation } = rotationStatus(live);
  return { ...(rotatedAt !== undefined ? { rotatedAt } : {}), ...(awaitingConfirmation !== undefined ? { awaitingConfirmation } : {}) };
}

/** When the live key's current value was set: its last rotation, else its creation. */
export function valueSetAt(live: KubeObject): Date | undefined {
  const at = rotationStatus(live).rotatedAt ?? live.metadata.creationTimestamp;
  const ms = at ? Date.parse(at) : NaN;
  return Number.isNaN(ms) ? undefined : new Date(ms);
}

/** Whether the live key's last rotation still awaits confirmation (its previous value works with no deadline). */
export function awaitingConfirmation(live: KubeObject): boolean {
  return rotationStatus(live).awaitingConfirmation === true;
}

/**
 * The rotation the key needs now, if any (`wanted` is git's object, `live` the server's). `moved`:
 * the live value was delivered to another sink (or its first delivery may have happened unrecorded),
 * so whoever reads it there keeps it for the overlap.
 */
export function dueRotation(wanted: KubeObject, live: KubeObject, now: Date, moved?: 'moved' | 'unrecorded', keySink?: string): PlannedRotation | undefined {
  const a = wanted.metadata.annotations ?? {};
  const every = a[annotations.rotateEvery]?.trim();
  // keySink: the sink the planner settled on (key-secret, or a stranded --key-dir file).
  const sink = keySink ?? a[annotations.keySecret];
  const everyMs = every === undefined ? undefined : durationMs(every);
  const unconfirmed = awaitingConfirmation(live);
  if (sink === undefined || (everyMs === undefined && !unconfirmed && !moved)) return undefined;
  const setAt = valueSetAt(live);
  const ageMs = setAt ? Math.max(0, now.getTime() - setAt.getTime()) : 0;
  if (!unconfirmed && !moved && ageMs < everyMs!) return undefined;
  const overlap = a[annotations.rotationOverlap]?.trim();
  const overlapMs = (overlap === undefined ? undefined : durationMs(overlap)) ?? defaultRotationOverlapMs;
  return {
    reason: moved ?? (unconfirmed ? 'unconfirmed' : 'due'),
    sink,
    ...(everyMs !== undefined ? { rotateEvery: every! } : {}),
    overlap: overlap ?? `${defaultRotationOverlapMs / 3_600_000}h`,
    overlapSeconds: Math.floor(overlapMs / 1000),
    ageSeconds: Math.floor(ageMs / 1000),
  };
}

/**
 * When the live key's scheduled rotation (its own rotate-every, as the reconciler applied it) is
 * next due: its value's age reaching rotate-every, or at once while a rotation awaits confirmation;
 * undefined without a schedule or a sink. What `teamkeys keys` shows.
 */
export function scheduledRotationDue(live: KubeObject): Date | undefined {
  const a = live.metadata.annotations ?? {};
  const every = a[annotations.rotateEvery];
  const everyMs = every === undefined ? undefined : durationMs(every.trim());
  const setAt = valueSetAt(live);
  if (everyMs === undefined || a[annotations.keySecret] === undefined || !setAt) return undefined;
  return awaitingConfirmation(live) ? setAt : new Date(setAt.getTime() + everyMs);
}

/**
 * The earliest time a key of `desired` falls due (as live holds them now), for a daemon that
 * otherwise plans only on a change. A key the plan just rotated is due again a whole period later,
 * which a re-plan after the write finds; a soon time is always safe, a late one never happens here.
 */
export function nextRotation(desired: DesiredObject[], live: { ownedaccesskeys: KubeObject[] }): Date | undefined {
  const byName = new Map(live.ownedaccesskeys.map((k) => [k.metadata.name!, k]));
  let next: number | undefined;
  for (const d of desired) {
    if (d.plural !== 'ownedaccesskeys') continue;
    const every = d.obj.metadata.annotations?.[annotations.rotateEvery];
    const everyMs = every === undefined ? undefined : durationMs(every.trim());
    const k = byName.get(d.obj.metadata.name!);
    if (everyMs === undefined || !k) continue;
    const setAt = valueSetAt(k);
    const at = rotationStatus(k).awaitingConfirmation === true || !setAt ? 0 : setAt.getTime() + everyMs;
    next = next === undefined ? at : Math.min(next, at);
  }
  return next === undefined ? undefined : new Date(next);
}
