/** Assembles authentication and authorization over a registry: the team index first, loaded. */
import { grantsOfUser } from '../../auth/temporary-access.js';
import type { Logger } from 'pino';
import { ActivityRecorder, defaultActivityIntervalMs } from '../../auth/activity.js';
import { Authenticator } from '../../auth/authenticate.js';
import { Authorizer } from '../../auth/authorize.js';
import { FailureLimiter, type FailureLimitOptions } from '../../auth/failure-limit.js';
import { TeamIndex } from '../../auth/team-index.js';
import { dependentsFinder } from '../../registry/dependents.js';
import type { Registry } from '../../registry/registry.js';
import type { AuthContext } from './guard.js';
import { defaultMaxKeysPerUser, keyQuota } from '../key-quota.js';
import { budgetScopes } from '../client-address.js';

export interface AuthOptions {
  /** How often a key's status.lastActivity may be written (default: activity.ts). */
  activityIntervalMs?: number;
  now?: () => Date;
  /** The budget of failed authentications per client address; false turns the limit off. */
  failureLimit?: FailureLimitOptions | false;
  /** Access keys one identity may have (default: key-quota.ts); 0 for no bound. */
  maxKeysPerUser?: number;
  /** How long a Login key works while its identity cannot be refreshed (default 24 h). */
  identityMaxStalenessMs?: number;
}

/** 50 wrong keys at once, then one every half second: no human or sane retry loop gets near it. */
export const defaultFailureLimit: FailureLimitOptions = { burst: 50, perSecond: 2 };

export async function createAuthContext(registry: Registry, log: Logger, opts: AuthOptions = {}): Promise<AuthContext & { activity: ActivityRecorder }> {
  const teams = new TeamIndex(registry.teams, log);
  await teams.start();
  const activity = new ActivityRecorder(registry.ownedaccesskeys, opts.activityIntervalMs ?? defaultActivityIntervalMs, log);
  const now = opts.now ?? (() => new Date());
  const authenticator = new Authenticator(registry, teams, activity, now, opts.identityMaxStalenessMs);
  const lookup = async (kind: string, name: string) => {
    const r = registry.byKind(kind);
    return r ? r.get(name).catch(() => undefined) : undefined;
  };
  const limit = opts.failureLimit ?? defaultFailureLimit;
  return {
    authenticator,
    authorizer: new Authorizer(teams, registry.teams.info.group),
    teams,
    activity,
    lookup,
    dependents: dependentsFinder(registry),
    temporaryGrants: (user) => grantsOfUser(registry.accessrequests, user, now()),
    now,
    ...(opts.maxKeysPerUser !== 0 ? { keyQuota: keyQuota(registry.ownedaccesskeys, opts.maxKeysPerUser ?? defaultMaxKeysPerUser) } : {}),
    // Counted by the client's address and, for IPv6, its networks (client-address.ts).
    ...(limit ? { failures: new FailureLimiter({ scopes: budgetScopes, ...limit }) } : {}),
  };
}
