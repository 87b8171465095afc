/**
 * `teamkeys serve`'s sign-in flags, named as kube-apiserver names its own (--oidc-*), and their
 * reading into SignInOptions: the client secret and CA come from files, never from the command line.
 */
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { defaultIdentityMaxStalenessMs } from '../auth/login-keys.js';
import {
  defaultConnectorName,
  defaultGroupsClaim,
  defaultLoginKeyTtlSeconds,
  defaultRefreshConcurrency,
  defaultRefreshIntervalMs,
  defaultUsernameClaim,
  usernamePrefixFor,
  type SignInOptions,
} from '../signin/options.js';
import { parseDuration } from './duration.js';
import { addFlags, type FlagSpec, type OptionsOf } from './flag-specs.js';
import { CliError } from './errors.js';

/** The sign-in flags, declared once: SignInFlags is derived from this table. */
export const signInFlags = [
  { name: 'oidc-issuer-url', arg: '<url>', help: 'sign people in through this OpenID Connect provider (teamkeys login); its issuer URL, https' },
  { name: 'oidc-client-id', arg: '<id>', help: "this server's client id at the provider" },
  { name: 'oidc-client-secret-file', arg: '<file>', help: "file holding this server's client secret at the provider" },
  { name: 'oidc-ca-file', arg: '<file>', help: 'PEM certificate(s) to trust for the provider (a private CA)' },
  { name: 'oidc-username-claim', arg: '<claim>', help: 'the claim that names the user (spec.user of the Login key)', default: defaultUsernameClaim },
  { name: 'oidc-username-prefix', arg: '<prefix>', help: "prepended to every username from the provider; default '<issuer-url>#' unless the claim is email; '-' for none (docs/sso.md)" },
  { name: 'oidc-groups-claim', arg: '<claim>', help: "the claim that lists the user's groups", default: defaultGroupsClaim },
  { name: 'oidc-groups-prefix', arg: '<prefix>', help: "prepended to every group from the provider (e.g. 'oidc:')", default: '' },
  { name: 'oidc-allowed-groups', arg: '<groups>', help: 'comma-separated: only people in one of these groups may sign in, and only these groups are kept' },
  { name: 'oidc-extra-scopes', arg: '<scopes>', help: 'comma-separated scopes to ask for besides openid, profile, email, offline_access (e.g. groups)' },
  { name: 'oidc-connector-name', arg: '<name>', help: 'identity.connector of the keys sign-in mints', default: defaultConnectorName },
  { name: 'oidc-redirect-url', arg: '<url>', help: 'the callback registered at the provider (default: <this server>/auth/callback as the browser reaches it)' },
  { name: 'login-key-ttl', arg: '<duration>', help: 'a Login key expires this long after its last use', default: `${defaultLoginKeyTtlSeconds / 86400}d` },
  { name: 'identity-refresh-interval', arg: '<duration>', help: "how often the leader refreshes each Login key's identity from the provider", default: `${defaultRefreshIntervalMs / 60_000}m` },
  { name: 'identity-max-staleness', arg: '<duration>', help: 'a Login key whose identity could not be refreshed this long stops working', default: `${defaultIdentityMaxStalenessMs / 3_600_000}h` },
] as const satisfies readonly FlagSpec[];

export type SignInFlags = OptionsOf<typeof signInFlags>;

const list = (v: string | undefined) => (v ?? '').split(',').map((s) => s.trim()).filter(Boolean);

export function addSignInFlags(cmd: Command): Command {
  return addFlags(cmd, signInFlags);
}

/** The sign-in settings as the flags give them, checked; the secret and CA are still files (read by readSignIn). */
export interface SignInSettings {
  maxStalenessMs: number;
  signIn?: Omit<SignInOptions, 'clientSecret' | 'ca'> & { clientSecretFile: string; caFile?: string };
}

/** Checks the sign-in flags without reading anything: signIn is undefined when --oidc-issuer-url is not given. */
export function signInSettings(f: SignInFlags): SignInSettings {
  const maxStalenessMs = parseDuration('--identity-max-staleness', f.identityMaxStaleness);
  if (!f.oidcIssuerUrl) {
    if (f.oidcClientId || f.oidcClientSecretFile) throw new CliError('--oidc-client-id and --oidc-client-secret-file need --oidc-issuer-url');
    return { maxStalenessMs };
  }
  let issuer: URL;
  try {
    issuer = new URL(f.oidcIssuerUrl);
  } catch {
    throw new CliError(`--oidc-issuer-url must be a URL, not "${f.oidcIssuerUrl}"`);
  }
  if (issuer.protocol !== 'https:') throw new CliError('--oidc-issuer-url must be an https URL (as kube-apiserver requires)');
  if (!f.oidcClientId || !f.oidcClientSecretFile) throw new CliError('--oidc-issuer-url needs --oidc-client-id and --oidc-client-secret-file');
  const refreshIntervalMs = parseDuration('--identity-refresh-interval', f.identityRefreshInterval);
  if (refreshIntervalMs >= maxStalenessMs) throw new CliError('--identity-max-staleness must be longer than --identity-refresh-interval');
  return {
    maxStalenessMs,
    signIn: {
      issuerUrl: f.oidcIssuerUrl,
      clientId: f.oidcClientId,
      clientSecretFile: f.oidcClientSecretFile,
      ...(f.oidcCaFile ? { caFile: f.oidcCaFile } : {}),
      usernameClaim: f.oidcUsernameClaim,
      usernamePrefix: usernamePrefixFor(f.oidcUsernamePrefix, f.oidcUsernameClaim, f.oidcIssuerUrl),
      groupsClaim: f.oidcGroupsClaim,
      groupsPrefix: f.oidcGroupsPrefix,
      allowedGroups: list(f.oidcAllowedGroups),
      extraScopes: list(f.oidcExtraScopes?.replace(/\s+/g, ',')),
      connectorName: f.oidcConnectorName,
      maxStalenessMs,
      ...(f.oidcRedirectUrl ? { redirectUrl: f.oidcRedirectUrl } : {}),
      loginKeyTtlSeconds: Math.ceil(parseDuration('--login-key-ttl', f.loginKeyTtl) / 1000),
      refreshIntervalMs,
      refreshConcurrency: defaultRefreshConcurrency,
    },
  };
}

/** The sign-in options with the client secret and CA read from their files. */
export async function readSignIn(settings: NonNullable<SignInSettings['signIn']>): Promise<SignInOptions> {
  const { clientSecretFile, caFile, ...rest } = settings;
  const clientSecret = (await readFile(clientSecretFile, 'utf8').catch(() => {
    throw new CliError(`cannot read --oidc-client-secret-file ${clientSecretFile}`);
  })).trim();
  if (!clientSecret) throw new CliError(`--oidc-client-secret-file ${clientSecretFile} is empty`);
  const ca = caFile ? await readFile(caFile).catch(() => {
    throw new CliError(`cannot read --oidc-ca-file ${caFile}`);
  }) : undefined;
  return { ...rest, clientSecret, ...(ca ? { ca } : {}) };
}
