/** One client interface for the reconciler: the embedded registry or a server over HTTP. */
import type { AuditEvent, AuditFilter } from '../api/audit-event.js';
import type { Status } from '../api/errors.js';
import type { KubeObject } from '../api/types.js';

export type { ApiPlural, Plural } from '../api/resources.js';
import type { ApiPlural } from '../api/resources.js';

export interface WriteOptions {
  dryRun?: boolean;
}

export type { KeyRotationSpec } from '../api/key-rotation.js';
import type { KeyRotationSpec } from '../api/key-rotation.js';

export interface RotateOptions extends WriteOptions {
  /** Who the audit trail names as the writer (default: the client's, `gitops`). */
  fieldManager?: string;
  /** A precondition (the body's metadata.resourceVersion): 409 unless the key is still at it. */
  resourceVersion?: string;
}

/** Deletion guarded as kube's DeleteOptions.preconditions: the object must still be the one planned. */
export interface DeleteOptions extends WriteOptions {
  preconditions?: { uid?: string; resourceVersion?: string };
}

export interface ClientEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: KubeObject;
}

/** A running watch: iterate its events; stop() ends it. */
export interface ClientWatch extends AsyncIterable<ClientEvent> {
  stop(): void;
}

export interface ApiClient {
  /** Where this client writes, for reports: `sqlite:...`, `https://...`. */
  readonly target: string;
  readonly apiVersion: string;
  list(plural: ApiPlural): Promise<KubeObject[]>;
  get(plural: ApiPlural, name: string): Promise<KubeObject | undefined>;
  create(plural: ApiPlural, obj: KubeObject, opts?: WriteOptions): Promise<KubeObject>;
  replace(plural: ApiPlural, name: string, obj: KubeObject, opts?: WriteOptions): Promise<KubeObject>;
  patch(plural: ApiPlural, name: string, ops: unknown[], opts?: WriteOptions): Promise<KubeObject>;
  delete(plural: ApiPlural, name: string, opts?: DeleteOptions): Promise<void>;
  /**
   * POST ownedaccesskeys/NAME/rotation (src/api/key-rotation.ts): rotates the key and returns it
   * with spec.key set to the new value (the only time it is shown), or with `confirm` starts the
   * overlap of a rotation that awaited confirmation (409 when none does).
   */
  rotate(name: string, spec: KeyRotationSpec, opts?: RotateOptions): Promise<KubeObject>;
  /** Every change after the current state (the objects that exist are not replayed). */
  watch(plural: ApiPlural): ClientWatch;
  /**
   * The server's audit events for a filter; undefined when the target keeps no audit trail. A
   * trail that cannot be read (not served there, a caller it refuses) throws a ClientError: the
   * report says attribution was unavailable and why, and drift is named from managedFields.
   */
  auditEvents(filter: AuditFilter): Promise<AuditEvent[] | undefined>;
  close(): Promise<void>;
}

/**
 * The client layer's one error: the server's Status, whichever transport carried it, or (with
 * `fromServer` false) a Status made here when no answer came: refused, untrusted, timed out.
 */
export class ClientError extends Error {
  constructor(
    readonly status: Status,
    readonly transport?: string,
    readonly fromServer = true,
  ) {
    super(status.message ?? `request failed with ${status.code}`);
    this.name = 'ClientError';
  }

  get code(): number {
    return this.status.code;
  }
}

/** The field manager every reconciler write uses. */
export const gitopsManager = 'gitops';
