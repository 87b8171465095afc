/**
 * The first start of an empty store creates user admin's key, a member of team "admins", which
 * holds management-admin. The key goes to a 0600 file (or comes from TEAMKEYS_ADMIN_KEY); it is
 * never logged or printed.
 */
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ApiError } from '../api/errors.js';
import type { Registry } from '../registry/registry.js';

export interface BootstrapResult {
  created: boolean;
  /** Where the generated key was written, when it was. */
  keyFile?: string;
}

export async function bootstrapAdmin(
  registry: Registry,
  opts: { adminKey?: string; keyFile: string; ttlSeconds?: number },
): Promise<BootstrapResult> {
  const [teams, keys] = await Promise.all([registry.teams.list({ limit: 1 }), registry.ownedaccesskeys.list({ limit: 1 })]);
  if (teams.items.length > 0 || keys.items.length > 0) return { created: false };
  try {
    return await create(registry, opts);
  } catch (err) {
    // Another replica on the same database bootstrapped first.
    if (err instanceof ApiError && err.code === 409) return { created: false };
    throw err;
  }
}

async function create(registry: Registry, opts: { adminKey?: string; keyFile: string; ttlSeconds?: number }): Promise<BootstrapResult> {
  const group = registry.teams.info.apiVersion;
  await registry.teams.create({
    apiVersion: group,
    kind: 'Team',
    metadata: { name: 'admins' },
    spec: { displayName: 'Administrators', users: ['admin'], clusterRoles: [{ name: 'management-admin' }] },
  }, { fieldManager: 'teamkeys-bootstrap' });
  const { object } = await registry.ownedaccesskeys.create({
    apiVersion: group,
    kind: 'OwnedAccessKey',
    metadata: { name: 'admin' },
    spec: {
      displayName: 'Bootstrap administrator key',
      user: 'admin',
      type: 'User',
      // Under a server-wide maximum ttl even this key must expire.
      ...(opts.ttlSeconds ? { ttl: opts.ttlSeconds } : {}),
      ...(opts.adminKey ? { key: opts.adminKey } : {}),
    },
  }, { fieldManager: 'teamkeys-bootstrap', valueSetBy: 'admin:bootstrap' });
  if (opts.adminKey) return { created: true };
  const key = (object.spec as { key: string }).key;
  await mkdir(dirname(opts.keyFile), { recursive: true });
  await writeFile(opts.keyFile, `${key}\n`, { mode: 0o600 });
  await chmod(opts.keyFile, 0o600); // in case the file already existed with a wider mode
  return { created: true, keyFile: opts.keyFile };
}
