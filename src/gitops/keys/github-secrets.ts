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

/** GitHub's largest page of a secret's selected repositories. */
const reposPerPage = 100;

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
    const sodium = await loadSodium();
    let encrypted_value: string;
    try {
      const sealed = sodium.crypto_box_seal(sodium.from_string(key), sodium.from_base64(publicKey.key, sodium.base64_variants.ORIGINAL));
      encrypted_value = sodium.to_base64(sealed, sodium.base64_variants.ORIGINAL);
    } catch {
      throw new KeyDeliveryError(`the key was not delivered to ${describeTarget(target)}: the public key GitHub sent is not a valid key`);
    }
    const path = `${base}/${encodeURIComponent(target.name)}`;
    const body: Record<string, unknown> = { encrypted_value, key_id: publicKey.key_id, ...(target.type === 'org' ? await this.orgAccess(target, path) : {}) };
    await this.request('PUT', path, target, body);
  }

  /**
   * Who may read an organization secret, resent with every update (PUT requires a visibility):
   * its own visibility and, for `selected`, its repository list, so a rotation never widens it nor
   * empties it. A secret that does not exist is not created: who may read it is an
   * administrator's choice (SOC 2: access is granted deliberately), which a default would make.
   */
  private async orgAccess(target: GitHubTarget, path: string): Promise<{ visibility: string; selected_repository_ids?: number[] }> {
    const existing = (await this.request('GET', path, target, undefined, true)) as { visibility?: string } | undefined;
    if (!existing?.visibility) {
      throw new KeyDeliveryError(`the key was not delivered to ${describeTarget(target)}: the secret does not exist, and teamkeys only updates organization secrets: create it first (Settings > Secrets and variables > Actions, or gh secret set --org) with the visibility and repositories you want`);
    }
    if (existing.visibility !== 'selected') return { visibility: existing.visibility };
    const ids: number[] = [];
    for (let page = 1; ; page++) {
      const listed = (await this.request('GET', `${path}/repositories?per_page=${reposPerPage}&page=${page}`, target)) as { total_count?: number; repositories?: { id?: unknown }[] } | undefined;
      const repos = listed?.repositories ?? [];
      for (const r of repos) {
        if (typeof r.id !== 'number') throw new KeyDeliveryError(`the key was not delivered to ${describeTarget(target)}: GitHub listed a selected repository without an id`);
        ids.push(r.id);
      }
      if (repos.length < reposPerPage || (listed?.total_count !== undefined && ids.length >= listed.total_count)) break;
    }
    return { visibility: 'selected', selected_repository_ids: ids };
  }
}

/** The delivery GITHUB_TOKEN (and GITHUB_API_URL) configure, or none without a token. */
export function githubSecretsFromEnv(env: NodeJS.ProcessEnv = process.env): GitHubSecrets | undefined {
  const token = env.GITHUB_TOKEN?.trim();
  return token ? new GitHubSecrets({ token, ...(env.GITHUB_API_URL ? { apiUrl: env.GITHUB_API_URL } : {}) }) : undefined;
}

/** libsodium, ready. Loaded when first needed, not at start: validate and plan parse secret targets but never seal a key. */
export async function loadSodium() {
  const sodium = (await import('libsodium-wrappers')).default;
  await sodium.ready;
  return sodium;
}

/** The run option that delivers new keys' values to GitHub secrets, when the environment has a token. */
export function keyDeliveryFromEnv(env: NodeJS.ProcessEnv = process.env): { keyDelivery?: KeyDelivery } {
  const delivery = githubSecretsFromEnv(env);
  return delivery ? { keyDelivery: delivery } : {};
}
