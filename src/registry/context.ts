/**
 * What every registry verb works with: the store, the kind's model, the clock, key naming, who
 * writes, and the admission hook each write runs.
 */
import type { GroupKind, GroupResource } from '../api/errors.js';
import type { FieldCipher } from '../api/field-cipher.js';
import type { FieldError } from '../api/field-errors.js';
import type { ResourceModel } from '../api/model.js';
import { withoutSecrets, type StoredApiObject } from '../api/secrets.js';
import type { KubeObject } from '../api/types.js';
import type { Store } from '../store/types.js';
import type { Requester, WriteObserver } from './write-observer.js';

export interface RegistryContext {
  store: Store;
  model: ResourceModel;
  now: () => Date;
  gr: GroupResource;
  gk: GroupKind;
  /** Store key prefix of the kind: `/teams/`. */
  prefix: string;
  /** Appends the random suffix to a generateName prefix. */
  generateName: (prefix: string) => string;
  /** Encrypts sealed fields at rest. */
  cipher: FieldCipher;
  /**
   * Server-set fields that need a read of other objects (a team key's binding), before admission.
   * What it finds wrong with the write is returned, and refused only after admission: those errors
   * tell about other objects (whether a team exists), which a caller refused the write may not learn.
   */
  prepareWrite?: (ctx: RegistryContext, next: StoredApiObject, old: StoredApiObject | undefined) => Promise<FieldError[]>;
  /** Told about every successful write (the server's audit trail). */
  observe?: WriteObserver;
}

export function makeContext(
  store: Store,
  model: ResourceModel,
  now: () => Date,
  generateName: (prefix: string) => string,
  cipher: FieldCipher,
  observe?: WriteObserver,
): RegistryContext {
  const { group, plural, kind } = model.info;
  return { store, model, now, generateName, cipher, gr: { group, resource: plural }, gk: { group, kind }, prefix: `/${plural}/`, ...(observe ? { observe } : {}) };
}

export const keyOf = (ctx: RegistryContext, name: string) => ctx.prefix + name;

/** RFC 3339 in UTC with second precision, as kube writes metav1.Time. */
export function timestamp(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** The object as a client sees it, with the key value added back only when this request set it. */
export function present(stored: StoredApiObject, revealedKey?: string): KubeObject {
  const external = withoutSecrets(stored);
  // A spec of its own: the copy above is shallow, and the stored object's spec may be one others
  // hold (the watch cache's, a shared event's), where the value must never appear.
  if (revealedKey !== undefined && external.spec && typeof external.spec === 'object') external.spec = { ...external.spec, key: revealedKey };
  return external;
}

/** The outcome of a write: the object, and warnings for the client (unknown fields dropped). */
export interface WriteResult {
  object: KubeObject;
  warnings: string[];
}

/** Who writes: the fieldManager of the request (kube: else the User-Agent up to its first "/"). */
export interface Writer {
  fieldManager?: string;
  /** Who sent the request, for the audit trail (the server's authenticated caller). */
  requester?: Requester;
  /** Recorded with the write in the audit trail (kube's audit annotations): the outcome of an identity refresh. */
  auditAnnotations?: Record<string, string>;
  /** The Login key the request's key is or is tied to: a key this write creates is tied to it (keys.ts). */
  signIn?: SignInTie;
  /** Who sets a key's value with this write (api/key-types.ts valueSetByAnnotation), recorded on it by keys.ts. */
  valueSetBy?: string;
}

export const managerOf = (w: Writer) => w.fieldManager || 'unknown';

/** The Login key a request's key is, or is tied to (keys.ts tieToSignIn). */
export interface SignInTie {
  name: string;
  uid: string;
}

/**
 * Admission: a check the caller (the HTTP server's authorization) runs inside every write, on the
 * exact objects being written, so no decision is made on a stale read. It throws to refuse.
 */
export interface Admission {
  verb: 'create' | 'update' | 'patch' | 'delete';
  subresource?: 'status';
  /** The object as stored before the write (absent on create). */
  old?: KubeObject;
  /** The object as it will be stored (absent on delete). */
  object?: KubeObject;
  /** A key-setting write (keys.ts: a value set, or a disabled key enabled): whoever wrote it can use the key. */
  setsKey?: boolean;
  /** A delete's propagationPolicy as asked (absent: Background). */
  propagationPolicy?: string;
  /** A dry run: judged all the same (as kube's admission judges one), but nothing will be stored. */
  dryRun?: boolean;
}

export type Admit = (a: Admission) => void | Promise<void>;
