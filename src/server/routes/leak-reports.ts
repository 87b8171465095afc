/** The two ways a leaked key is reported (revoke.ts, github-secret-scanning.ts), registered together with their budgets. */
import type { FastifyInstance } from 'fastify';
import { FailureLimiter, type FailureLimitOptions } from '../../auth/failure-limit.js';
import type { Registry } from '../../registry/registry.js';
import { defaultGitHubKeysUrl, GitHubKeys } from '../leaks/github-keys.js';
import { registerGitHubScanningRoute } from './github-secret-scanning.js';
import { defaultRevokeLimit, registerRevokeRoute } from './revoke.js';
import { budgetScopes } from '../client-address.js';

export interface LeakReportOptions {
  /** Where GitHub's secret scanning public keys are fetched (serve --github-secret-scanning-keys-url). */
  gitHubKeysUrl?: string;
  /** Reports (and unverified alerts) one client address may send: burst and refill per second. */
  limit?: FailureLimitOptions;
  now?: () => Date;
}

export function registerLeakReportRoutes(app: FastifyInstance, registry: Registry, opts: LeakReportOptions = {}): void {
  const now = opts.now ?? (() => new Date());
  const limit = opts.limit ?? defaultRevokeLimit;
  // Counted by the client's address and, for IPv6, its networks (client-address.ts).
  const budget = () => new FailureLimiter({ scopes: budgetScopes, ...limit });
  registerRevokeRoute(app, registry, budget(), now);
  registerGitHubScanningRoute(app, registry, new GitHubKeys(opts.gitHubKeysUrl ?? defaultGitHubKeysUrl), budget(), now);
}
