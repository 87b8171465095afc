/** The object types of the API. The kinds' types are generated from schemas/ (see generated/). */
import type { ObjectMeta, OwnedAccessKey, OwnedAccessKeySpec, Team } from './generated/schema-types.js';

export type {
  AccessRequest,
  AccessRequestSpec,
  FederatedCredential,
  FederatedCredentialSpec,
  ManagedFieldsEntry,
  ObjectMeta,
  OwnedAccessKey,
  OwnedAccessKeySpec,
  OwnerReference,
  Team,
  TeamSpec,
} from './generated/schema-types.js';

/**
 * Any object of this API, as a JSON value. A type alias rather than an interface, so that the
 * generated Team and OwnedAccessKey (which have no index signature) are assignable to it.
 */
export type KubeObject = {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec?: unknown;
  status?: unknown;
};

export type ApiObject = Team | OwnedAccessKey;

/**
 * A Login key's `spec.identity`: the person as the identity provider vouched for them (Dex's
 * connector Identity: userId, username, groups, claims, connectorData). Not who a request acts for:
 * that is auth/identity.ts's Identity, which reads these groups among others.
 */
export type ConnectorIdentity = NonNullable<OwnedAccessKeySpec['identity']>;

export interface ListMeta {
  resourceVersion: string;
  continue?: string;
  remainingItemCount?: number;
}

export interface ObjectList<T = KubeObject> {
  apiVersion: string;
  kind: string;
  metadata: ListMeta;
  items: T[];
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchEvent<T = unknown> {
  type: WatchEventType;
  object: T;
}


export function isJsonMap(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Sets a field named by a request as an own property. `obj[key] = value` with the key `__proto__`
 * (a JSON body may carry one) would replace the object's prototype instead: the field would vanish
 * from the stored object while every check reading `obj.x` saw the value's fields.
 */
export function setField(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}
