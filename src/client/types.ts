/** One client interface for the reconciler: the embedded registry or a server over HTTP. */
import type { AuditEvent, AuditFilter } from '../api/audit-event.js';
import type { Status } from '../api/errors.js';
import type { KubeObject } from '../api/types.js';

export type { Plural } from '../api/resources.js';
import type { Plural } from '../api/resources.js';

export interface WriteOptions {
  dryRun?: boolean;
}

/** Deletion guarded as kube's DeleteOptions.preconditions: the object must still be the one planned. */
export interface DeleteOptions extends WriteOptions {
  preconditions?: { uid?: string; resourceVersion?: string };
}

/**
 * The spec of a KeyRotation (POST …/ownedaccesskeys/NAME/rotation): a new value (given, or made by
 * the server) whose previous value keeps working for overlapSeconds, from now or, with
 * awaitConfirmation, from a later `{confirm: true}`.
 */
export interface KeyRotationSpec {
  key?: string;
  overlapSeconds?: number;
  awaitConfirmation?: boolean;
  confirm?: boolean;
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
  list(plural: Plural): Promise<KubeObject[]>;
  get(plural: Plural, name: string): Promise<KubeObject | undefined>;
  create(plural: Plural, obj: KubeObject, opts?: WriteOptions): Promise<KubeObject>;
  replace(plural: Plural, name: string, obj: KubeObject, opts?: WriteOptions): Promise<KubeObject>;
  patch(plural: Plural, name: string, ops: unknown[], opts?: WriteOptions): Promise<KubeObject>;
  delete(plural: Plural, name: string, opts?: DeleteOptions): Promise<void>;
  /** Rotates an OwnedAccessKey's value (or confirms a rotation): the key, with spec.key the new value when one was made. */
  rotate(name: string, spec: KeyRotationSpec): Promise<KubeObject>;
  /** Every change after the current state (the objects that exist are not replayed). */
  watch(plural: Plural): ClientWatch;
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
