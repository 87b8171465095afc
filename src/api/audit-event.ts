/**
 * The audit trail's record of one write, after kube's audit.k8s.io/v1 Event at level Metadata:
 * who (the key's user and the key's name), what (verb, object, resourceVersion, field manager,
 * the field paths touched) and when. Never a value of a secret, never a request body.
 */
export const auditGroup = 'audit.management.service';
export const auditApiVersion = `${auditGroup}/v1`;

/** The key of `user.extra` naming the CI job a Federated key was minted for (whoami's key too). */
export const auditJobExtra = 'management.service/job';

/** The CI job an event's writer acted for, if it wrote with a Federated key. */
export const auditJobOf = (e: AuditEvent): string | undefined => e.user.extra?.[auditJobExtra]?.[0];

export interface AuditObjectRef {
  apiGroup: string;
  apiVersion: string;
  resource: string;
  name: string;
  uid?: string;
  resourceVersion?: string;
  subresource?: string;
}

export interface AuditEvent {
  apiVersion: typeof auditApiVersion;
  kind: 'Event';
  level: 'Metadata';
  auditID: string;
  stage: 'ResponseComplete';
  verb: 'create' | 'update' | 'patch' | 'delete';
  /**
   * kube's UserInfo, plus the name of the access key the request authenticated with. `extra`
   * holds what kube's UserInfo.extra would: for a Federated key, the CI job it was minted for
   * under `management.service/job` (as `kubectl auth whoami` shows it).
   */
  user: { username: string; keyName?: string; groups?: string[]; extra?: Record<string, string[]> };
  /** Whom `user` acted as, by the Impersonate-* headers (kube's `impersonatedUser`). */
  impersonatedUser?: { username: string; uid?: string; groups?: string[]; extra?: Record<string, string[]> };
  sourceIPs?: string[];
  userAgent?: string;
  objectRef: AuditObjectRef;
  /** The field manager the write was recorded under in managedFields. */
  fieldManager: string;
  /** Field paths the write added, changed or removed (kube's fieldpath notation). */
  fields?: { added?: string[]; changed?: string[]; removed?: string[] };
  /** What the writer said about the write, as kube's audit annotations (an identity refresh's outcome). */
  annotations?: Record<string, string>;
  /** When the write was stored: RFC 3339 with milliseconds. */
  stageTimestamp: string;
}

/** What GET .../events can be narrowed to; every given field must match. */
export interface AuditFilter {
  resource?: string;
  name?: string;
  uid?: string;
  username?: string;
  /** Only events at or after this RFC 3339 time. */
  since?: string;
  /** At most this many of the newest matching events (default 500). */
  limit?: number;
}

/** The newest events first are what a reader wants; lists hold at most this many. */
export const defaultAuditLimit = 500;
export const maxAuditLimit = 5000;

/** Reads the audit trail (the server's recorder, or a client of its API). */
export interface AuditReader {
  list(filter: AuditFilter): Promise<AuditEvent[]>;
}
