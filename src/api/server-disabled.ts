/**
 * Which of the server's own disabling writes (a leak report, the unused-key rule) owns a field of a
 * key, read from its managedFields: what the server wrote is trusted by who wrote it, as no request
 * through the API may write under those managers (key-notices.ts isServerFieldManager). The
 * reconciler holds a key the server disabled (gitops/plan/ignore-fields.ts), and the notifier tells
 * a leak from a holder's own disable (notify/events.ts).
 */
import { fromFieldsV1 } from './fields/fieldset.js';
import { disabledReasonAnnotation, leakReportManager, unusedKeysManager } from './key-notices.js';
import type { KubeObject } from './types.js';

/** The disable reason annotation, as a field set member. */
export const disabledReasonField = JSON.stringify(['f:metadata', 'f:annotations', `f:${disabledReasonAnnotation}`]);
/** spec.disabled, as a field set member. */
export const disabledField = JSON.stringify(['f:spec', 'f:disabled']);

/** The server's disabling manager that owns `field` of the key, and when it wrote, if one does. */
export function serverDisablerOf(key: KubeObject, field: string): { manager: string; time: string } | undefined {
  const entry = (key.metadata.managedFields ?? []).find((e) => (e.manager === leakReportManager || e.manager === unusedKeysManager) && fromFieldsV1(e.fieldsV1).has(field));
  return entry && { manager: entry.manager!, time: entry.time ?? '' };
}
