/**
 * From the provider's claims (the validated ID token, completed by userinfo) to the identity a
 * Login key carries: the username claim, the groups (kept only where allowed, then prefixed), and
 * every other string claim as extraClaims. Pure, so every rule is tested as a table.
 */
import type { ConnectorIdentity } from '../api/types.js';
import type { SignInOptions } from './options.js';

/** Claims that describe the token, not the person: never copied into extraClaims. */
const protocolClaims = new Set(['iss', 'sub', 'aud', 'exp', 'iat', 'nbf', 'jti', 'nonce', 'at_hash', 'c_hash', 's_hash', 'auth_time', 'azp', 'sid', 'acr', 'amr', 'email', 'email_verified']);

export type ClaimsOutcome = { username: string; identity: ConnectorIdentity } | { refusal: string };

type Mapping = Pick<SignInOptions, 'usernameClaim' | 'usernamePrefix' | 'groupsClaim' | 'groupsPrefix' | 'allowedGroups' | 'connectorName'>;

/** The ID token's claims win; userinfo fills what the ID token leaves out. */
export function mergeClaims(idToken: Record<string, unknown>, userinfo: Record<string, unknown> | undefined): Record<string, unknown> {
  return { ...(userinfo ?? {}), ...Object.fromEntries(Object.entries(idToken).filter(([, v]) => v !== undefined)) };
}

function groupsOf(claims: Record<string, unknown>, claim: string): string[] {
  const value = claims[claim];
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((g): g is string => typeof g === 'string') : [];
}

/** The identity of a sign-in, or why the person may not sign in. */
export function identityFromClaims(claims: Record<string, unknown>, opts: Mapping): ClaimsOutcome {
  const claimed = claims[opts.usernameClaim];
  if (typeof claimed !== 'string' || claimed === '') return { refusal: `the identity provider gave no ${opts.usernameClaim} claim to name you by; ask your administrator` };
  // The prefix keeps signed-in names apart from every other name (options.ts usernamePrefixFor).
  const username = `${opts.usernamePrefix}${claimed}`;
  // Reserved, as kube-apiserver reserves it: the server's own writes and anonymous reports are
  // recorded as system:teamkeys and system:anonymous, which a provider's account named so (with
  // usernames unprefixed) would share in the audit trail (found by a review).
  if (username.startsWith('system:')) return { refusal: `${claimed} names you with the reserved system: prefix; ask your administrator` };
  // As kube-apiserver: an email the provider says it has not verified may be anyone's, so it names no one.
  if (opts.usernameClaim === 'email' && claims.email_verified !== undefined && claims.email_verified !== true) {
    return { refusal: `the identity provider has not verified the email ${claimed} that would name you; verify it there, or ask your administrator` };
  }
  let groups = groupsOf(claims, opts.groupsClaim);
  if (opts.allowedGroups.length > 0) {
    groups = groups.filter((g) => opts.allowedGroups.includes(g));
    if (groups.length === 0) return { refusal: `${claimed} is in none of the groups allowed to sign in (${opts.allowedGroups.join(', ')})` };
  }
  const extraClaims: Record<string, string> = {};
  for (const [name, value] of Object.entries(claims)) {
    if (typeof value === 'string' && !protocolClaims.has(name) && name !== opts.usernameClaim && name !== opts.groupsClaim) extraClaims[name] = value;
  }
  const identity: ConnectorIdentity = {
    userId: String(claims.sub ?? ''),
    username,
    groups: [...new Set(groups.map((g) => `${opts.groupsPrefix}${g}`))].sort(),
    connector: opts.connectorName,
  };
  const preferred = claims.preferred_username ?? claims.name;
  if (typeof preferred === 'string') identity.preferredUsername = preferred;
  if (typeof claims.email === 'string') identity.email = claims.email;
  if (claims.email_verified === true) identity.emailVerified = true;
  if (Object.keys(extraClaims).length > 0) identity.extraClaims = extraClaims;
  return { username, identity };
}
