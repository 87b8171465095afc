/**
 * What there is to say about one access key, derived from what the store already records: the
 * disabled-reason annotation the server (unused-key disabling) and revocation write, the key's
 * health (key-health.ts: expiry, last use), status.rotation, and the reconciler's key-delivered
 * mark. Pure: the notifier asks again on every sweep, and an event's `occurrence` names the
 * state that makes it, so the same state always yields the same event (the outbox dedupes on it).
 */
import type { OwnedAccessKey } from '../api/types.js';
import { reEnabledAtAnnotation } from '../api/re-enable.js';
import { expiresWithin, isoSeconds, ownerOf, type KeyHealth } from '../auth/key-health.js';
import { annotations } from '../gitops/plan/annotations.js';
import { parseSecretTarget } from '../gitops/keys/sinks.js';
import { awaitsConfirmation, disabledReason, leakReportManager, pendingDelivery } from '../api/key-notices.js';
import { disabledField, disabledReasonField, serverDisablerOf } from '../api/server-disabled.js';
import type { NotificationEvent } from './config.js';

/** The reason revocation (POST /auth/revoke, the GitHub secret-scanning endpoint) disables a leaked key with. */
export const reportedLeakedReason = 'reported-leaked';
/** How long a rotation may await confirmation, or a delivery stay pending, before it counts as failed. */
export const defaultFailureGraceMs = 15 * 60_000;

/** The key as messages name it: never its value. */
export interface KeyRef {
  name: string;
  uid: string;
  owner: string;
  team?: string;
  user?: string;
  /** OWNER/REPO of the repository that holds the key's secret (its key-secret annotation), if one does. */
  repository?: string;
}

export interface KeyEvent {
  event: NotificationEvent;
  key: KeyRef;
  /** The state that makes the event (a reason, an expiry time): the same state, the same event. */
  occurrence: string;
  /** Why (a disabled key's reason), or when (an expiry, a planned disable), for the message. */
  detail: string;
  /** When it happens or happened (RFC 3339), where there is such a time. */
  at?: string;
  /** An expiring key's spec.ttl (seconds), for the command that extends it. */
  ttlSeconds?: number;
}

export interface EventOptions {
  warnExpiryMs: number;
  disableUnusedAfterMs?: number;
  failureGraceMs?: number;
}

export function keyRef(key: OwnedAccessKey): KeyRef {
  const spec = key.spec ?? {};
  const sink = key.metadata.annotations?.[annotations.keySecret];
  const target = sink ? parseSecretTarget(sink) : undefined;
  const repository = typeof target === 'object' && (target.type === 'repo' || target.type === 'environment') ? `${target.owner}/${target.repo}` : undefined;
  return { name: key.metadata.name ?? '', uid: key.metadata.uid ?? '', owner: ownerOf(key), ...(spec.team ? { team: spec.team } : {}), ...(spec.user ? { user: spec.user } : {}), ...(repository ? { repository } : {}) };
}

const ms = (s: string | null | undefined) => (s ? Date.parse(s) : NaN);

/** Events to send at once: disabled (why), reported leaked, rotation or delivery failed. */
export function immediateEvents(key: OwnedAccessKey, now: Date, opts: Pick<EventOptions, 'failureGraceMs'> = {}): KeyEvent[] {
  if (key.metadata.deletionTimestamp) return [];
  const ref = keyRef(key);
  const notes = key.metadata.annotations ?? {};
  const out: KeyEvent[] = [];
  const reason = disabledReason(key);
  if (reason !== undefined) {
    // Who disabled it decides what it is, not the reason's text, which any holder may write on a
    // key of its own: a holder wrote "reported-leaked" and every receiver got the server's leak
    // alarm, then one message per rewrite of the text (found by a review). A disable by its holder
    // is one KeyDisabled, its text not shown, whatever it is rewritten to.
    const byReason = serverDisablerOf(key, disabledReasonField);
    const server = byReason ?? serverDisablerOf(key, disabledField);
    // A re-enable moves re-enabled-at, so a key disabled again for the same reason is a new event.
    // The server's reason names it while the server owns it; once the holder rewrote it (the server
    // still owning spec.disabled), the server's write does, which the holder cannot move (a review
    // of the change had each rewrite send the leak alarm again).
    const what = !server ? 'by its holder' : byReason ? reason : `${server.manager} at ${server.time}`;
    const occurrence = `${what}|${notes[reEnabledAtAnnotation] ?? ''}`;
    out.push({ event: server?.manager === leakReportManager ? 'KeyLeaked' : 'KeyDisabled', key: ref, occurrence, detail: byReason ? reason : '' });
  }
  const grace = opts.failureGraceMs ?? defaultFailureGraceMs;
  const rotation = key.status?.rotation;
  if (rotation && awaitsConfirmation(key) && now.getTime() - ms(rotation.rotatedAt) > grace) {
    out.push({ event: 'RotationFailed', key: ref, occurrence: rotation.rotatedAt!, detail: `rotated at ${rotation.rotatedAt} and not confirmed since: the new value was not delivered`, at: rotation.rotatedAt! });
  }
  const delivered = pendingDelivery(key);
  if (delivered !== undefined) {
    // The mark is written before the value is made and replaced once it arrived: still there after
    // the grace, the delivery failed. The last write's time says since when.
    const since = Math.max(...(key.metadata.managedFields ?? []).map((f) => ms(f.time ?? undefined)).filter(Number.isFinite), ms(key.metadata.creationTimestamp ?? undefined));
    if (now.getTime() - since > grace) {
      out.push({ event: 'DeliveryFailed', key: ref, occurrence: `${delivered}|${key.metadata.generation ?? ''}`, detail: `the value was not delivered to ${delivered.slice('pending:'.length)}`, at: isoSeconds(since) });
    }
  }
  return out;
}

/** Warnings for the day's digest: expiring within the window, or unused and to be disabled within it. */
export function warningEvents(key: OwnedAccessKey, h: KeyHealth, now: Date, opts: EventOptions): KeyEvent[] {
  if (h.disabled || h.expired || key.metadata.deletionTimestamp) return [];
  const out: KeyEvent[] = [];
  if (expiresWithin(h, opts.warnExpiryMs)) {
    const at = isoSeconds(h.expiresAt!);
    out.push({ event: 'KeyExpiring', key: keyRef(key), occurrence: at, detail: `expires at ${at}`, at, ...(key.spec?.ttl ? { ttlSeconds: key.spec.ttl } : {}) });
  }
  const after = opts.disableUnusedAfterMs;
  if (after !== undefined) {
    const again = ms(key.metadata.annotations?.[reEnabledAtAnnotation]);
    const disableAt = Math.max(h.lastUse, Number.isFinite(again) ? again : -Infinity) + after;
    const left = disableAt - now.getTime();
    if (left > 0 && left <= opts.warnExpiryMs) {
      const at = isoSeconds(disableAt);
      out.push({ event: 'KeyUnused', key: keyRef(key), occurrence: at, detail: `${h.neverUsed ? 'never used' : `unused since ${isoSeconds(h.lastUse)}`}: disabled at ${at} unless used`, at });
    }
  }
  return out;
}
