/** Kinds of access key (spec.type) that change how a key is treated. */

/** What a key without spec.type is, as listings show it (`teamkeys keys`, the access review). */
export const defaultKeyType = 'User';

/** A key minted by signing in (SSO): made only by the server's sign-in path, never kept in git. */
export const loginKeyType = 'Login';

/** A key minted for a CI job by a FederatedCredential (src/federation): made only by the token exchange, never kept in git. */
export const federatedKeyType = 'Federated';

export const isFederatedKey = (key: { spec?: unknown } | undefined): boolean =>
  typeof key?.spec === 'object' && key.spec !== null && (key.spec as { type?: unknown }).type === federatedKeyType;

/** Keys the server mints (sign-in, token exchange): never planned, pruned, imported or reported as drift. */
export const isServerMintedKey = (key: { spec?: unknown } | undefined): boolean => isLoginKey(key) || isFederatedKey(key);

export const isLoginKey = (key: { spec?: unknown } | undefined): boolean =>
  typeof key?.spec === 'object' && key.spec !== null && (key.spec as { type?: unknown }).type === loginKeyType;

/**
 * Who set a key's current value, written by the server at every write that sets a new one (a
 * create, a rotation, a PUT or patch of spec.key to another value) or gives the key another holder
 * (registry/keys.ts recordValueSetter); how it is spelled is auth/identity.ts valueSetterOf's. A
 * user's temporary access rides only on keys the user or an administrator set (auth/temporary-access.ts
 * grantsCarried). Absent on keys written before stop 64.
 */
export const valueSetByAnnotation = 'management.service/value-set-by';

/** The setter of values written straight into the store (the embedded client, `teamkeys create`): its operator, with every right. */
export const storeOperatorSetter = 'admin:embedded-store';
