/** How reports name who made a drift: the person and key from the audit trail, else the manager. */
import type { Attribution } from '../plan/attribution.js';

/**
 * `olga (key olga-laptop) via kubectl-patch at T`, `team:payments (key K) via kubectl-patch, job J
 * at T` for a Federated key's write, or `kubectl-patch (Update) at T` without the trail.
 */
export function whoText(by: Attribution | undefined): string {
  if (!by) return 'unknown';
  const at = by.time ? ` at ${by.time}` : '';
  if (by.user) return `${by.user}${by.keyName ? ` (key ${by.keyName})` : ''} via ${by.manager}${by.job ? `, job ${by.job}` : ''}${at}`;
  return `${by.manager}${by.operation ? ` (${by.operation})` : ''}${at}`;
}

/** The line every report form prints when the audit trail could not name people: never a quiet fallback. */
export function attributionUnavailableText(reason: string): string {
  return `attribution unavailable: ${reason} (drift is named by field manager only)`;
}

/** The drift sentence: `added "mallory" to spec.users: olga (key olga-laptop) via kubectl-patch at T`. */
export function driftText(c: { path: string; description?: string; lastChangedBy?: Attribution }): string {
  return `${c.description ?? `changed ${c.path}`}: ${whoText(c.lastChangedBy)}`;
}

/** Counts in the tense of the run: "4 to create" in a plan, "created 4" after an apply. */
export function countsText(mode: string, s: Record<'create' | 'update' | 'replace' | 'delete', number> & { rotate?: number }, all: boolean): string[] {
  const verbs = { create: 'created', update: 'updated', replace: 'replaced', delete: 'deleted', rotate: 'rotated' } as const;
  const counts = { ...s, rotate: s.rotate ?? 0 };
  // rotate is counted only when there is one: reports without scheduled rotations read as before.
  const keys = (['create', 'update', 'replace', 'delete', 'rotate'] as const).filter((k) => (all && k !== 'rotate') || counts[k] > 0);
  return keys.map((k) => (mode === 'apply' ? `${verbs[k]} ${counts[k]}` : `${counts[k]} to ${k}`));
}

/** What a report says of a change whose live value a pull request may not see. */
export const withheldText = 'differs; live value not shown (the manifest does not name this field)';

/** A scheduled rotation as a sentence (text and Markdown alike); the value is never in it. */
export function rotationText(r: { reason: 'due' | 'unconfirmed' | 'moved' | 'unrecorded'; age?: string; withheld?: true; rotateEvery?: string; overlap: string; sink: string; previousValidUntil?: string }): string {
  const why = r.reason === 'moved'
    ? `key-secret changed: the key was delivered elsewhere${r.age ? `, value ${r.age} old` : ''}`
    : r.reason === 'unrecorded'
      ? `its last delivery was never recorded (it may have reached ${r.sink}): rotated again${r.age ? `, value ${r.age} old` : ''}`
    : r.withheld || r.age === undefined
      ? `would be rotated if due, rotate-every ${r.rotateEvery ?? ''}`
      : r.reason === 'due'
        ? `value ${r.age} old, rotate-every ${r.rotateEvery ?? ''}`
        : `the last rotation was never confirmed (its delivery failed): retried, value ${r.age} old`;
  const after = r.previousValidUntil ? `delivered to ${r.sink}; the previous value works until ${r.previousValidUntil}` : `new value to ${r.sink}; the previous value works ${r.overlap} more once it is delivered`;
  return `rotate key (${why}): ${after}`;
}
