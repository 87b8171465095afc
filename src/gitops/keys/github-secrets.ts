/**
 * Delivers generated access keys to GitHub Actions secrets, as GitHub's REST API requires: the
 * value sealed (libsodium sealed box) with the repository's public key, then PUT by name. The key
 * is in no message this module makes; errors name the secret and what GitHub answered.
 */

/** Where a key goes: the value of the key-secret annotation, `github:OWNER/REPO/SECRET_NAME`. */
export interface SecretTarget {
  owner: string;
  repo: string;
  name: string;
}

/** Something that can receive a key for a target (GitHub here; a stand-in in tests). */
export interface KeyDelivery {
  deliver(target: SecretTarget, key: string): Promise<void>;
}

/** A delivery that did not happen; the message names the secret, never the key. */
export class KeyDeliveryError extends Error {}

const owner = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$/;
const repo = /^[A-Za-z0-9._-]{1,100}$/;
// GitHub's rules: letters, digits and underscores, not starting with a digit or GITHUB_.
const secretName = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The target an annotation names, or why it names none. */
export function parseSecretTarget(value: string): SecretTarget | string {
  const m = value.match(/^github:([^/]+)\/([^/]+)\/([^/]+)$/);
  if (!m) return `must be github:OWNER/REPO/SECRET_NAME, not ${JSON.stringify(value)}`;
  const [, o, r, n] = m as unknown as [string, string, string, string];
  if (!owner.test(o)) return `${JSON.stringify(o)} is not a GitHub owner name`;
  if (!repo.test(r) || r === '.' || r === '..') return `${JSON.stringify(r)} is not a GitHub repository name`;
  if (!secretName.test(n) || /^GITHUB_/i.test(n)) return `${JSON.stringify(n)} is not a valid secret name (letters, digits and _, not starting with a digit or GITHUB_)`;
  return { owner: o, repo: r, name: n };
}

export const formatTarget = (t: SecretTarget) => `github:${t.owner}/${t.repo}/${t.name}`;

/** How the messages name a secret: as GitHub's settings page does. */
export const describeTarget = (t: SecretTarget) => `GitHub secret ${t.name} of ${t.owner}/${t.repo}`;

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

  private async request(method: string, path: string, target: SecretTarget, body?: object): Promise<unknown> {
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
    if (!res.ok) {
      const message = (() => {
        try {
          return (JSON.parse(text) as { message?: string }).message;
        } catch {
          return undefined;
        }
      })();
      const hint = res.status === 401 ? ' (is GITHUB_TOKEN valid?)' : res.status === 403 || res.status === 404 ? ' (the token needs the "Secrets: read and write" permission on the repository)' : '';
      throw fail(`GitHub answered ${res.status}${message ? ` "${message}"` : ''} to ${method} ${path}${hint}`);
    }
    return text ? (JSON.parse(text) as unknown) : undefined;
  }

  async deliver(target: SecretTarget, key: string): Promise<void> {
    const base = `/repos/${encodeURIComponent(target.owner)}/${encodeURIComponent(target.repo)}/actions/secrets`;
    const publicKey = (await this.request('GET', `${base}/public-key`, target)) as { key_id?: string; key?: string } | undefined;
    if (!publicKey?.key || !publicKey.key_id) throw new KeyDeliveryError(`the key was not delivered to ${describeTarget(target)}: GitHub sent no repository public key`);
    // Loaded here, not at start: validate and plan parse secret targets but never seal a key.
    const sodium = (await import('libsodium-wrappers')).default;
    await sodium.ready;
    let encrypted_value: string;
    try {
      const sealed = sodium.crypto_box_seal(sodium.from_string(key), sodium.from_base64(publicKey.key, sodium.base64_variants.ORIGINAL));
      encrypted_value = sodium.to_base64(sealed, sodium.base64_variants.ORIGINAL);
    } catch {
      throw new KeyDeliveryError(`the key was not delivered to ${describeTarget(target)}: the repository public key GitHub sent is not a valid key`);
    }
    await this.request('PUT', `${base}/${encodeURIComponent(target.name)}`, target, { encrypted_value, key_id: publicKey.key_id });
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
