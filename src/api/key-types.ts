/** Kinds of access key (spec.type) that change how a key is treated. */

/** What a key without spec.type is, as listings show it (`teamkeys keys`, the access review). */
export const defaultKeyType = 'User';

/** A key minted by signing in (SSO): made only by the server's sign-in path, never kept in git. */
export const loginKeyType = 'Login';

export const isLoginKey = (key: { spec?: unknown } | undefined): boolean =>
  typeof key?.spec === 'object' && key.spec !== null && (key.spec as { type?: unknown }).type === loginKeyType;
