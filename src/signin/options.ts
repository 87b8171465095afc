/** The settings of sign-in (`teamkeys serve --oidc-*`) and their defaults, owned here. */

export interface SignInOptions {
  issuerUrl: string;
  clientId: string;
  clientSecret: string;
  /** PEM of the CA that signed the provider's certificate (a private provider). */
  ca?: Buffer;
  /** The claim that names the user (default preferred_username). */
  usernameClaim: string;
  /** Prepended to the username claim (usernamePrefixFor): what keeps signed-in names apart from every other name. */
  usernamePrefix: string;
  /** The claim that lists the user's groups (default groups). */
  groupsClaim: string;
  /** Prepended to every group name the provider gives (after filtering by allowedGroups). */
  groupsPrefix: string;
  /** When not empty: only these groups are kept, and a person in none of them may not sign in. */
  allowedGroups: string[];
  /** Scopes asked for besides openid, profile, email and offline_access. */
  extraScopes: string[];
  /** identity.connector of the keys sign-in mints. */
  connectorName: string;
  loginKeyTtlSeconds: number;
  /** The callback URL registered at the provider; default: this server's /auth/callback as the browser reached it. */
  redirectUrl?: string;
  refreshIntervalMs: number;
  /** How many keys are refreshed at once. */
  refreshConcurrency: number;
  /** --identity-max-staleness: a Login key not refreshed for longer has ended, and the refresher never revives it. */
  maxStalenessMs?: number;
}

/** The real system's default lifetime of a Login key (after its last use). */
export const defaultLoginKeyTtlSeconds = 20 * 24 * 3600;
export const defaultRefreshIntervalMs = 15 * 60_000;
export const defaultRefreshConcurrency = 4;
export const defaultUsernameClaim = 'preferred_username';
export const defaultGroupsClaim = 'groups';
export const defaultConnectorName = 'oidc';
/** What a sign-in asks for: identity, the profile and e-mail claims, and a refresh token. */
export const baseScopes = ['openid', 'profile', 'email', 'offline_access'];
/** The server's own path for sign-in, outside the API prefix (no key is needed to sign in). */
export const authPrefix = '/auth';

/**
 * The prefix of signed-in usernames, as kube-apiserver's --oidc-username-prefix: unset, a username
 * from any claim but `email` is prefixed with the issuer URL and `#` (`https://idp.example#ana`), so
 * no account of the provider can take the name of a user known otherwise (the administrator
 * `admin`, a user a Team names); `-` for none, when the operator vouches that the provider's names
 * are this server's names (then a sign-in may take a name only if no key outside sign-in acts for it: mint.ts).
 */
export function usernamePrefixFor(flag: string | undefined, usernameClaim: string, issuerUrl: string): string {
  if (flag === '-') return '';
  if (flag !== undefined) return flag;
  return usernameClaim === 'email' ? '' : `${issuerUrl}#`;
}
