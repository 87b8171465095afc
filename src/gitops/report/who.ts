/** How reports name who made a drift: the person and key from the audit trail, else the manager. */
import type { Attribution } from '../plan/attribution.js';

/** `olga (key olga-laptop) via kubectl-patch at T`, or `kubectl-patch (Update) at T` without the trail. */
export function whoText(by: Attribution | undefined): string {
  if (!by) return 'unknown';
  const at = by.time ? ` at ${by.time}` : '';
  if (by.user) return `${by.user}${by.keyName ? ` (key ${by.keyName})` : ''} via ${by.manager}${at}`;
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
export function countsText(mode: string, s: Record<'create' | 'update' | 'replace' | 'delete', number>, all: boolean): string[] {
  const verbs = { create: 'created', update: 'updated', replace: 'replaced', delete: 'deleted' } as const;
  const keys = (['create', 'update', 'replace', 'delete'] as const).filter((k) => all || s[k] > 0);
  return keys.map((k) => (mode === 'apply' ? `${verbs[k]} ${s[k]}` : `${s[k]} to ${k}`));
}

/** What a report says of a change whose live value a pull request may not see. */
export const withheldText = 'differs; live value not shown (the manifest does not name this field)';
