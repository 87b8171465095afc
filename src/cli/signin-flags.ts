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
  type SignInOptions,
} from '../signin/options.js';
import { parseDuration } from './duration.js';
import { CliError } from './errors.js';

export interface SignInFlags {
  oidcIssuerUrl?: string;
  oidcClientId?: string;
  oidcClientSecretFile?: string;
  oidcCaFile?: string;
  oidcUsernameClaim: string;
  oidcGroupsClaim: string;
  oidcGroupsPrefix: string;
  oidcAllowedGroups?: string;
  oidcExtraScopes?: string;
  oidcConnectorName: string;
  oidcRedirectUrl?: string;
  loginKeyTtl: string;
  identityRefreshInterval: string;
  identityMaxStaleness: string;
}

const list = (v: string | undefined) => (v ?? '').split(',').map((s) => s.trim()).filter(Boolean);

export function addSignInFlags(cmd: Command): Command {
  return cmd
    .option('--oidc-issuer-url <url>', 'sign people in through this OpenID Connect provider (teamkeys login); its issuer URL, https')
    .option('--oidc-client-id <id>', "this server's client id at the provider")
    .option('--oidc-client-secret-file <file>', "file holding this server's client secret at the provider")
    .option('--oidc-ca-file <file>', "PEM certificate(s) to trust for the provider (a private CA)")
    .option('--oidc-username-claim <claim>', 'the claim that names the user (spec.user of the Login key)', defaultUsernameClaim)
    .option('--oidc-groups-claim <claim>', "the claim that lists the user's groups", defaultGroupsClaim)
    .option('--oidc-groups-prefix <prefix>', "prepended to every group from the provider (e.g. 'oidc:')", '')
    .option('--oidc-allowed-groups <groups>', 'comma-separated: only people in one of these groups may sign in, and only these groups are kept')
    .option('--oidc-extra-scopes <scopes>', 'comma-separated scopes to ask for besides openid, profile, email, offline_access (e.g. groups)')
    .option('--oidc-connector-name <name>', 'identity.connector of the keys sign-in mints', defaultConnectorName)
    .option('--oidc-redirect-url <url>', 'the callback registered at the provider (default: <this server>/auth/callback as the browser reaches it)')
    .option('--login-key-ttl <duration>', 'a Login key expires this long after its last use', `${defaultLoginKeyTtlSeconds / 86400}d`)
    .option('--identity-refresh-interval <duration>', "how often the leader refreshes each Login key's identity from the provider", `${defaultRefreshIntervalMs / 60_000}m`)
    .option('--identity-max-staleness <duration>', 'a Login key whose identity could not be refreshed this long stops working', `${defaultIdentityMaxStalenessMs / 3_600_000}h`);
}

/** The sign-in settings, or undefined when --oidc-issuer-url is not given. */
export async function signInOptions(f: SignInFlags): Promise<{ signIn?: SignInOptions; maxStalenessMs: number }> {
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
  const clientSecret = (await readFile(f.oidcClientSecretFile, 'utf8').catch(() => {
    throw new CliError(`cannot read --oidc-client-secret-file ${f.oidcClientSecretFile}`);
  })).trim();
  if (!clientSecret) throw new CliError(`--oidc-client-secret-file ${f.oidcClientSecretFile} is empty`);
  const ca = f.oidcCaFile ? await readFile(f.oidcCaFile).catch(() => {
    throw new CliError(`cannot read --oidc-ca-file ${f.oidcCaFile}`);
  }) : undefined;
  const refreshIntervalMs = parseDuration('--identity-refresh-interval', f.identityRefreshInterval);
  if (refreshIntervalMs >= maxStalenessMs) throw new CliError('--identity-max-staleness must be longer than --identity-refresh-interval');
  return {
    maxStalenessMs,
    signIn: {
      issuerUrl: f.oidcIssuerUrl,
      clientId: f.oidcClientId,
      clientSecret,
      ...(ca ? { ca } : {}),
      usernameClaim: f.oidcUsernameClaim,
      groupsClaim: f.oidcGroupsClaim,
      groupsPrefix: f.oidcGroupsPrefix,
      allowedGroups: list(f.oidcAllowedGroups),
      extraScopes: list(f.oidcExtraScopes?.replace(/\s+/g, ',')),
      connectorName: f.oidcConnectorName,
      ...(f.oidcRedirectUrl ? { redirectUrl: f.oidcRedirectUrl } : {}),
      loginKeyTtlSeconds: Math.ceil(parseDuration('--login-key-ttl', f.loginKeyTtl) / 1000),
      refreshIntervalMs,
      refreshConcurrency: defaultRefreshConcurrency,
    },
  };
}
