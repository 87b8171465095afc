/**
 * Delivers generated access keys to GitHub Actions secrets, as GitHub's REST API requires: the
 * value sealed (libsodium sealed box) with the repository's public key, then PUT by name. The key
 * is in no message this module makes; errors name the secret and what GitHub answered.
 */

import { describeTarget, type GitHubTarget } from './sinks.js';

export { describeTarget, formatTarget, parseSecretTarget, type GitHubTarget, type SecretTarget } from './sinks.js';

/** Something that can receive a key for a GitHub target (GitHub here; a stand-in in tests). */
export interface KeyDelivery {
  deliver(target: GitHubTarget, key: string): Promise<void>;
}

/** A delivery that did not happen; the message names the secret, never the key. */
export class KeyDeliveryError extends Error {}

/**
 * The visibility a new organization secret gets: private (the organization's private and internal
 * repositories). An existing secret keeps the visibility (and repository selection) an
 * administrator gave it: a rotation never widens who may read a secret.
 */
export const defaultOrgVisibility = 'private';

/** The Actions secrets collection a target's secret lives in. */
function collection(t: GitHubTarget): string {
  const e = encodeURIComponent;
  switch (t.type) {
    case 'repo':
      return `/repos/${e(t.owner)}/${e(t.repo)}/actions/secrets`;
    case 'environment':
      return `/repos/${e(t.owner)}/${e(t.repo)}/environments/${e(t.environment)}/secrets`;
    case 'org':
      return `/orgs/${e(t.org)}/actions/secrets`;
  }
}

export interface GitHubOptions {
  token: string;
  /** GITHUB_API_URL; GitHub Enterprise Server answers under https://HOST/api/v3. */
  apiUrl?: string;
}

export class GitHubSecrets implements KeyDelivery {
  private readonly api: string;

  constructor(private readonly opts: GitHubOptions) {
    this.api = (opts.apiUrl || 'https://api.github.com').replace(/\/+$/, '');
  }

  private async request(method: string, path: string, target: GitHubTarget, body?: object, allow404 = false): Promise<unknown> {
    const fail = (why: string) => new KeyDeliveryError(`the key was not delivered to ${describeTarget(target)}: ${why}`);
    let res: Response;
    try {
      res = await fetch(`${this.api}${path}`, {
        method,
        headers: {
          Accept: 'application/vnd.github+json',
          Authorization: `Bearer ${this.opts.token}`,
          'X-GitHub-Api-Version': '2022-11-28',
          'User-Agent': 'teamkeys',
          ...(body ? { 'Content-Type': 'application/json' } : {}),
        },
        ...(body ? { body: JSON.stringify(body) } : {}),
        signal: AbortSignal.timeout(30_000),
      });
    } catch (err) {
      throw fail(`${method} ${this.api}${path} failed: ${err instanceof Error ? err.message : String(err)}`);
    }
    const text = await res.text();
    if (res.status === 404 && allow404) return undefined;
    if (!res.ok) {
      const message = (() => {
        try {
          return (JSON.parse(text) as { message?: string }).message;
        } catch {
          return undefined;
        }
      })();
      const hint = res.status === 401 ? ' (is GITHUB_TOKEN valid?)' : res.status === 403 || res.status === 404 ? ` (the token needs the "Secrets: read and write" permission on the ${target.type === 'org' ? 'organization' : target.type === 'environment' ? 'repository and the environment must exist' : 'repository'})` : '';
      throw fail(`GitHub answered ${res.status}${message ? ` "${message}"` : ''} to ${method} ${path}${hint}`);
    }
    return text ? (JSON.parse(text) as unknown) : undefined;
  }

  async deliver(target: GitHubTarget, key: string): Promise<void> {
    const base = collection(target);
    const publicKey = (await this.request('GET', `${base}/public-key`, target)) as { key_id?: string; key?: string } | undefined;
    if (!publicKey?.key || !publicKey.key_id) throw new KeyDeliveryError(`the key was not delivered to ${describeTarget(target)}: GitHub sent no public key`);
    // Loaded here, not at start: validate and plan parse secret targets but never seal a key.
    const sodium = (await import('libsodium-wrappers')).default;
    await sodium.ready;
    let encrypted_value: string;
    try {
      const sealed = sodium.crypto_box_seal(sodium.from_string(key), sodium.from_base64(publicKey.key, sodium.base64_variants.ORIGINAL));
      encrypted_value = sodium.to_base64(sealed, sodium.base64_variants.ORIGINAL);
    } catch {
      throw new KeyDeliveryError(`the key was not delivered to ${describeTarget(target)}: the public key GitHub sent is not a valid key`);
    }
    const path = `${base}/${encodeURIComponent(target.name)}`;
    const body: Record<string, string> = { encrypted_value, key_id: publicKey.key_id };
    if (target.type === 'org') {
      // PUT requires a visibility: the secret's own when it exists (never widened), else the default.
      const existing = (await this.request('GET', path, target, undefined, true)) as { visibility?: string } | undefined;
      body.visibility = existing?.visibility ?? defaultOrgVisibility;
    }
    await this.request('PUT', path, target, body);
  }
}

/** The delivery GITHUB_TOKEN (and GITHUB_API_URL) configure, or none without a token. */
export function githubSecretsFromEnv(env: NodeJS.ProcessEnv = process.env): GitHubSecrets | undefined {
  const token = env.GITHUB_TOKEN?.trim();
  return token ? new GitHubSecrets({ token, ...(env.GITHUB_API_URL ? { apiUrl: env.GITHUB_API_URL } : {}) }) : undefined;
}

/** The run option that delivers new keys' values to GitHub secrets, when the environment has a token. */
export function keyDeliveryFromEnv(env: NodeJS.ProcessEnv = process.env): { keyDelivery?: KeyDelivery } {
  const delivery = githubSecretsFromEnv(env);
  return delivery ? { keyDelivery: delivery } : {};
}
