/**
 * What marks an access key as having something to tell its owner at once (notify/events.ts says
 * what): a disable with a reason, a rotation awaiting confirmation, a delivery pending. Defined
 * below both of its readers: the notifier's events, and the watch cache's `notice` index
 * (registry/indexes.ts), through which the notifier's sweep visits only such keys, not every key.
 */

/** Why the server disabled a key: set with spec.disabled=true, and recorded in the audit event of that write. */
export const disabledReasonAnnotation = 'management.service/disabled-reason';
/** The field managers of the server's own disabling writes: a leak report's, and the unused-key rule's. */
export const leakReportManager = 'teamkeys-leak-report';
export const unusedKeysManager = 'teamkeys-unused-keys';
/**
 * The field managers the server itself writes with. What they wrote is trusted by who wrote it (a
 * leak report's disabling, held by the reconciler and told as KeyLeaked), so a request through the
 * API may not write under one of these names, given or taken from its User-Agent (found by a
 * review). Only these: a client's own `teamkeys-terraform` is its business (the review of the fix
 * found the whole prefix refused). test/api/server-field-managers.test.ts checks every one the
 * server writes with is here.
 */
export const serverFieldManagers: ReadonlySet<string> = new Set([
  leakReportManager,
  unusedKeysManager,
  'teamkeys-activity',
  'teamkeys-signin',
  'teamkeys-token-exchange',
  'teamkeys-access-expiry',
  'teamkeys-bootstrap',
  'teamkeys-garbage-collector',
]);
export const isServerFieldManager = (manager: string): boolean => serverFieldManagers.has(manager);
/** The same, as the issue names it; read as well, should a writer spell it so. */
export const otherDisabledReasonAnnotation = 'teamkeys.dev/disabled-reason';
/** Written by the reconciler once the current key reached the key-secret target (`pending:<target>` until then). */
export const keyDeliveredAnnotation = 'gitops.management.service/key-delivered';

interface Noticed {
  metadata?: { annotations?: Record<string, string> };
  spec?: { disabled?: unknown };
  status?: { rotation?: { awaitingConfirmation?: unknown } };
}

const annotationsOf = (key: unknown): Record<string, unknown> => {
  const a = (key as Noticed | undefined)?.metadata?.annotations;
  return typeof a === 'object' && a !== null ? a : {};
};

/** The reason a disabled key was disabled for, if it is disabled and says why. */
export function disabledReason(key: unknown): string | undefined {
  if ((key as Noticed | undefined)?.spec?.disabled !== true) return undefined;
  const notes = annotationsOf(key);
  const reason = notes[disabledReasonAnnotation] ?? notes[otherDisabledReasonAnnotation];
  return typeof reason === 'string' && reason !== '' ? reason : undefined;
}

/** The target a delivery of the key's value is pending for (`pending:<target>`), if one is. */
export function pendingDelivery(key: unknown): string | undefined {
  const delivered = annotationsOf(key)[keyDeliveredAnnotation];
  return typeof delivered === 'string' && delivered.startsWith('pending:') ? delivered : undefined;
}

/** Whether a rotation of the key awaits confirmation (its new value not delivered yet). */
export const awaitsConfirmation = (key: unknown): boolean => (key as Noticed | undefined)?.status?.rotation?.awaitingConfirmation === true;

/**
 * Whether the key may have something to say at once, whatever the time: every key with an
 * immediate event (events.ts) is one of these, which test/notify/sweep-candidates.test.ts holds it to.
 */
export const mayNotify = (key: unknown): boolean => disabledReason(key) !== undefined || awaitsConfirmation(key) || pendingDelivery(key) !== undefined;
