/**
 * Which keys a listing asks for (`teamkeys keys --expiring 14d --unused 90d --user ana`): every
 * given condition must hold. Pure, by the caller's `now`; the windows are key-health's, so the
 * listing and the reports (and the server's sweep) agree on which keys are expiring or unused.
 */
import type { OwnedAccessKey } from '../api/types.js';
import { expiresWithin, keyHealth, unusedFor } from './key-health.js';

export interface KeyFilter {
  /** Expires within this many ms, or has expired and is not yet removed (as the reports list them). */
  expiringWithinMs?: number;
  /** Not used for longer than this many ms (never used: since its creation). */
  unusedForMs?: number;
  /** The user's own keys (spec.user), sign-in (Login) keys included. */
  user?: string;
  /** The team's keys (spec.team); not its members' own keys, which belong to them (see docs). */
  team?: string;
  /** The keys of this subject (spec.subject). */
  subject?: string;
}

export function matchesKeyFilter(key: OwnedAccessKey, filter: KeyFilter, now: Date): boolean {
  if (filter.user !== undefined && key.spec.user !== filter.user) return false;
  if (filter.team !== undefined && key.spec.team !== filter.team) return false;
  if (filter.subject !== undefined && key.spec.subject !== filter.subject) return false;
  if (filter.expiringWithinMs === undefined && filter.unusedForMs === undefined) return true;
  const health = keyHealth(key, now);
  if (filter.expiringWithinMs !== undefined && !(health.expired || expiresWithin(health, filter.expiringWithinMs))) return false;
  if (filter.unusedForMs !== undefined && !unusedFor(health, filter.unusedForMs)) return false;
  return true;
}
