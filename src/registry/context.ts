/** What every registry verb works with: the store, the kind's model, the clock, and key naming. */
import type { GroupKind, GroupResource } from '../api/errors.js';
import type { FieldCipher } from '../api/field-cipher.js';
import type { FieldError } from '../api/field-errors.js';
import type { ResourceModel } from '../api/model.js';
import { withoutSecrets, type StoredApiObject } from '../api/secrets.js';
import type { KubeObject } from '../api/types.js';
import type { Store } from '../store/types.js';
import type { SignInTie } from './sign-in-tie.js';
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
  if (revealedKey !== undefined && external.spec && typeof external.spec === 'object') {
    (external.spec as Record<string, unknown>).key = revealedKey;
  }
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
  /** The Login key the request's key is or is tied to: a key this write creates is tied to it (sign-in-tie.ts). */
  signIn?: SignInTie;
}

export const managerOf = (w: Writer) => w.fieldManager || 'unknown';
