/**
 * The write observer: turns every write (never a dry run, never a refused one) into its audit
 * event, which the store keeps in the write's own transaction, and hears of it once committed. The
 * server records these as its audit trail; the registry knows nothing of what the events say, and
 * authorization (admission) stays a separate hook.
 */
import type { AuditEvent } from '../api/audit-event.js';
import type { KubeObject } from '../api/types.js';

/** Who sent a write, as the server authenticated it; absent for the server's own writes. */
/** kube's audit UserInfo of an impersonated user. */
export interface ImpersonatedUser {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export interface Requester {
  /** The key's user (or `team:<name>`, or its subject). */
  username: string;
  /** The name of the OwnedAccessKey the request authenticated with. */
  keyName?: string;
  groups?: string[];
  /** The CI job the key was minted for (a Federated key): the audit event's `user.extra`. */
  job?: string;
  sourceIP?: string;
  userAgent?: string;
  /** Set when the request was authenticated by the key's previous value (a rotation's overlap). */
  previousValue?: boolean;
  /** Whom the requester acted as (Impersonate-* headers): kube's audit `impersonatedUser`. */
  impersonatedUser?: ImpersonatedUser;
  /** The request's audit id (its Audit-Id response header), which its audit events carry. */
  auditID?: string;
}

/** Field paths (kube's fieldpath notation) a write added, changed or removed; never values of secrets. */
export interface FieldsTouched {
  added: string[];
  changed: string[];
  removed: string[];
}

export interface ObservedWrite {
  verb: 'create' | 'update' | 'patch' | 'delete';
  /** `rotation`: the rotation subresource, which writes the key itself (spec.key and status.rotation). */
  subresource?: 'status' | 'rotation' | 'approval';
  /** The resource (plural) written. */
  resource: string;
  /** The object after the write (for a delete, as it was removed or as it now terminates). */
  object: KubeObject;
  fieldManager: string;
  requester?: Requester;
  fields?: FieldsTouched;
  /** What the writer wants the audit trail to say about the write (kube's audit annotations). */
  auditAnnotations?: Record<string, string>;
}

export interface WriteObserver {
  /** The audit event of a write about to be stored, or undefined to record none. */
  eventOf(write: ObservedWrite): AuditEvent | undefined;
  /** The write committed with this event (objectRef.resourceVersion set). */
  committed(event: AuditEvent): void;
}
