/**
 * An audit event of a patch to Team `t`, as the audit trail (`GET .../auditevents`) gives it to the
 * drift attribution: who wrote, with which field manager, which fields, at resourceVersion `rv`
 * (also the day of January 2026 it happened, unless `more` says otherwise).
 */
import { auditApiVersion, type AuditEvent } from '../../src/api/audit-event.js';

export const teamPatch = (rv: number | undefined, manager: string, username: string, fields?: AuditEvent['fields'], more: Partial<AuditEvent> = {}): AuditEvent => ({
  apiVersion: auditApiVersion,
  kind: 'Event',
  level: 'Metadata',
  auditID: `a${rv}-${username}`,
  stage: 'ResponseComplete',
  verb: 'patch',
  user: { username },
  objectRef: { apiGroup: 'management.service', apiVersion: 'management.service/v1', resource: 'teams', name: 't', ...(rv !== undefined ? { resourceVersion: String(rv) } : {}) },
  fieldManager: manager,
  ...(fields ? { fields } : {}),
  stageTimestamp: `2026-01-0${rv}T00:00:00.000Z`,
  ...more,
});
