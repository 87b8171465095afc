/**
 * The one place a Login key is made: straight through the registry (no API admission, which
 * refuses type Login to everyone), with the identity the provider vouched for, the upstream refresh
 * token sealed in connectorData, and a ttl counted from the last use. Logging in again from the
 * same CLI replaces its previous Login key.
 */
import { ApiError } from '../api/errors.js';
import type { OwnedAccessKey } from '../api/types.js';
import { isLoginKey, loginKeyType, refusedAnnotation } from '../auth/login-keys.js';
import { mentions } from '../registry/mentions.js';
import { timestamp } from '../registry/context.js';
import type { Registry } from '../registry/registry.js';
import type { Requester } from '../registry/write-observer.js';
import type { Identity } from './claims.js';

/** The field manager of every write sign-in makes (minting and refresh). */
export const signInManager = 'teamkeys-signin';

/** What the upstream connector needs later: the refresh token (sealed at rest with the rest of connectorData). */
export interface ConnectorData {
  refreshToken?: string;
}

export interface MintRequest {
  username: string;
  identity: Identity;
  refreshToken?: string;
  ttlSeconds: number;
  /** The CLI's previous Login key, deleted once the new one exists (only a Login key of the same user). */
  replaces?: string;
  requester: Requester;
  /** Shown in the key's description: how the person signed in. */
  via: string;
}

export interface MintedKey {
  name: string;
  key: string;
  user: string;
  /** When the key expires unless used: RFC 3339. */
  expirationTimestamp: string;
  ttlSeconds: number;
}

/** A DNS-label-safe prefix for the key's generated name: `login-<user>-`. */
export function namePrefixFor(username: string): string {
  const clean = username.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40);
  return `login-${clean || 'user'}-`;
}

/**
 * Whether a live Login key of this username belongs to another account of the provider (another
 * subject): the username claim is not unique everywhere (Dex with several connectors, names people
 * may edit), so the first account signed in under a name keeps it. A key whose refresh the provider
 * refused (the account gone) binds nothing.
 */
async function heldByAnotherAccount(registry: Registry, username: string, identity: Identity): Promise<boolean> {
  for await (const obj of registry.ownedaccesskeys.scan(mentions(loginKeyType))) {
    const key = obj as OwnedAccessKey;
    if (!isLoginKey(key) || key.spec.user !== username || key.metadata.deletionTimestamp || key.metadata.annotations?.[refusedAnnotation] !== undefined) continue;
    if (key.spec.identity?.connector === identity.connector && key.spec.identity?.userId !== identity.userId) return true;
  }
  return false;
}

export async function mintLoginKey(registry: Registry, req: MintRequest, now: Date): Promise<MintedKey> {
  const keys = registry.ownedaccesskeys;
  if (await heldByAnotherAccount(registry, req.username, req.identity)) {
    throw new ApiError(403, 'Forbidden', `${req.username} is signed in with another account of the identity provider: an account that only shares the name does not sign in as them; ask your administrator`);
  }
  const identity: Identity = { ...req.identity };
  if (req.refreshToken) identity.connectorData = JSON.stringify({ refreshToken: req.refreshToken } satisfies ConnectorData);
  const { object } = await keys.create(
    {
      apiVersion: keys.info.apiVersion,
      kind: 'OwnedAccessKey',
      metadata: { generateName: namePrefixFor(req.username) },
      spec: {
        displayName: `${req.username} (signed in ${req.via})`,
        user: req.username,
        type: loginKeyType,
        identity,
        identityRefresh: timestamp(now),
        ttl: req.ttlSeconds,
        ttlAfterLastActivity: true,
      },
    },
    { fieldManager: signInManager, requester: req.requester },
  );
  const created = object as OwnedAccessKey;
  if (req.replaces && req.replaces !== created.metadata.name) await removePrevious(registry, req.replaces, req.username, req.requester);
  return {
    name: created.metadata.name!,
    key: created.spec.key!,
    user: req.username,
    expirationTimestamp: timestamp(new Date(now.getTime() + req.ttlSeconds * 1000)),
    ttlSeconds: req.ttlSeconds,
  };
}

/** Deletes the named key if it is a Login key of the same user; anything else is left alone. */
async function removePrevious(registry: Registry, name: string, user: string, requester: Requester): Promise<void> {
  const keys = registry.ownedaccesskeys;
  const old = (await keys.get(name).catch(() => undefined)) as OwnedAccessKey | undefined;
  if (old?.spec?.type !== loginKeyType || old.spec.user !== user) return;
  await keys.delete(name, { fieldManager: signInManager, requester, preconditions: { uid: old.metadata.uid! } }).catch((err: unknown) => {
    if (!(err instanceof ApiError && (err.code === 404 || err.code === 409))) throw err;
  });
}
