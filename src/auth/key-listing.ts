/**
 * One access key as a listing shows it (`teamkeys keys`): who owns it, how old it is, when it was
 * last used and expires, what its scope leaves, and where its rotation stands. Pure: the key and
 * `now` in, a row of plain data out; times as ISO strings with their distances in seconds, so JSON
 * readers compute nothing and people read the table. Never the key's value.
 */
import { defaultKeyType } from '../api/key-types.js';
import type { OwnedAccessKey } from '../api/types.js';
import { isoSeconds as iso, keyHealth } from './key-health.js';
import { scopeSummary } from './scope-summary.js';

export type OwnerKind = 'user' | 'team' | 'subject';

/** Where a rotation stands (the rotation contract's status.rotation), in the listing's words. */
export type RotationState = 'none' | 'awaiting-delivery' | 'overlap' | 'rotated';

export interface KeyRotationRow {
  state: RotationState;
  /** When the current value was set; null until the first rotation. */
  rotatedAt: string | null;
  /** When the previous value stops (stopped) working; null while awaiting delivery or before any rotation. */
  previousValidUntil: string | null;
  overlapSeconds: number | null;
  /** Which value made the last recorded use: Current or Previous; null when not recorded. */
  lastUsedValue: string | null;
}

export interface KeyRow {
  name: string;
  displayName: string | null;
  /** spec.type; `User` when the key has none (the schema's user-managed key); `Login` for the keys sign-in makes. */
  type: string;
  owner: { kind: OwnerKind; name: string } | null;
  createdAt: string | null;
  ageSeconds: number | null;
  lastUsedAt: string | null;
  /** Seconds since the last use, or since creation when never used. */
  unusedSeconds: number | null;
  /** null: never expires. */
  expiresAt: string | null;
  /** Negative once expired; null: never expires. */
  expiresInSeconds: number | null;
  expired: boolean;
  disabled: boolean;
  scope: string;
  rotation: KeyRotationRow;
  /** Seconds since the current value was set (the last rotation, else creation). */
  valueAgeSeconds: number | null;
}

/** status.rotation as the rotation contract writes it; read defensively, as a client of any server version would. */
interface RotationStatus {
  rotatedAt?: string;
  overlapSeconds?: number;
  awaitingConfirmation?: boolean;
  previousValidUntil?: string;
  lastUsedValue?: string;
}

const seconds = (ms: number) => Math.trunc(ms / 1000);
const parsed = (t: string | null | undefined) => {
  const ms = Date.parse(t ?? '');
  return Number.isFinite(ms) ? ms : undefined;
};

/** The owner as data; key-health's ownerOf is the same owner as messages write it. */
export function keyOwner(key: OwnedAccessKey): KeyRow['owner'] {
  if (key.spec.user) return { kind: 'user', name: key.spec.user };
  if (key.spec.team) return { kind: 'team', name: key.spec.team };
  if (key.spec.subject) return { kind: 'subject', name: key.spec.subject };
  return null;
}

/** `user:ana`, `team:payments`, `subject:ci-bot`: how identities are written across the project. */
export const ownerText = (owner: KeyRow['owner']): string => (owner ? `${owner.kind}:${owner.name}` : '');

function rotationOf(key: OwnedAccessKey, now: Date): KeyRotationRow {
  const r = (key.status as { rotation?: RotationStatus } | undefined)?.rotation;
  if (!r) return { state: 'none', rotatedAt: null, previousValidUntil: null, overlapSeconds: null, lastUsedValue: null };
  const until = parsed(r.previousValidUntil);
  const state: RotationState = r.awaitingConfirmation ? 'awaiting-delivery' : until !== undefined && until > now.getTime() ? 'overlap' : 'rotated';
  const rotatedAt = parsed(r.rotatedAt);
  return {
    state,
    rotatedAt: rotatedAt === undefined ? null : iso(rotatedAt),
    previousValidUntil: until === undefined || r.awaitingConfirmation ? null : iso(until),
    overlapSeconds: typeof r.overlapSeconds === 'number' ? r.overlapSeconds : null,
    lastUsedValue: r.lastUsedValue ?? null,
  };
}

/** The key's row at `now`. */
export function keyRow(key: OwnedAccessKey, now: Date): KeyRow {
  const nowMs = now.getTime();
  const created = parsed(key.metadata.creationTimestamp);
  const health = keyHealth(key, now);
  const rotation = rotationOf(key, now);
  const valueSince = rotation.rotatedAt ? Date.parse(rotation.rotatedAt) : created;
  return {
    name: key.metadata.name ?? '',
    displayName: key.spec.displayName || null,
    type: key.spec.type || defaultKeyType,
    owner: keyOwner(key),
    createdAt: created === undefined ? null : iso(created),
    ageSeconds: created === undefined ? null : seconds(nowMs - created),
    lastUsedAt: health.neverUsed ? null : iso(health.lastUse),
    // Without a creation time or a use, key-health counts the key unused since ever (for the sweeps): no span is known.
    unusedSeconds: health.neverUsed && created === undefined ? null : seconds(health.unusedForMs),
    expiresAt: health.expiresAt === undefined ? null : iso(health.expiresAt),
    expiresInSeconds: health.expiresInMs === undefined ? null : seconds(health.expiresInMs),
    expired: health.expired,
    disabled: health.disabled,
    scope: scopeSummary(key.spec.scope),
    rotation,
    valueAgeSeconds: valueSince === undefined ? null : seconds(nowMs - valueSince),
  };
}
