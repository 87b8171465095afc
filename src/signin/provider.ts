/**
 * The identity provider as this server reaches it: openid-client's discovery and configuration
 * (certified relying-party code: no JWT, JWKS or discovery of our own), over undici with the CA
 * given by --oidc-ca-file. Discovery is retried on demand: a provider that is down at start does
 * not keep the server from starting, and sign-in works once it is back.
 *
 * As a Dex connector, it ends every path in one place: the browser flow's callback, the device
 * flow's poll and the identity refresh all turn the provider's tokens into an identity with
 * identityOf, so a rule about claims cannot hold for one path and not another. The refresh needs
 * only this module (and the metrics it counts in), never the sign-in flows.
 */
import * as client from 'openid-client';
import { Agent, fetch as undiciFetch } from 'undici';
import type { ConnectorIdentity } from '../api/types.js';
import { identityFromClaims, mergeClaims, type ClaimsOutcome } from './claims.js';
import { SignInMetrics } from './metrics.js';
import { baseScopes, type SignInOptions } from './options.js';

/** How long one request to the provider may take. */
const providerTimeoutMs = 10_000;

/** The tokens of a code, device or refresh grant, as openid-client returns them. */
export type ProviderTokens = client.TokenEndpointResponse & client.TokenEndpointResponseHelpers;

/** What a refresh with an upstream refresh token ends in: the identity now, or why not. */
export type RefreshAnswer =
  | { outcome: 'refreshed'; username: string; identity: ConnectorIdentity; refreshToken: string }
  | { outcome: 'refused'; reason: string }
  /** `refreshToken`: the provider rotated the token before the failure; it is the one to keep. */
  | { outcome: 'unreachable'; reason: string; refreshToken?: string };

export class Provider {
  private config: Promise<client.Configuration> | undefined;
  private readonly fetch: client.CustomFetch;

  constructor(
    readonly opts: SignInOptions,
    /** Sign-ins and refreshes counted, whichever flow made them: one registry for /metrics. */
    readonly metrics: SignInMetrics = new SignInMetrics(),
  ) {
    const dispatcher = new Agent({ connect: { ...(opts.ca ? { ca: opts.ca } : {}), timeout: providerTimeoutMs }, headersTimeout: providerTimeoutMs, bodyTimeout: providerTimeoutMs });
    // undici's Response passes openid-client's checks (it compares by Symbol.toStringTag).
    this.fetch = ((url: string, options: client.CustomFetchOptions) =>
      undiciFetch(url, { ...(options as object), dispatcher } as Parameters<typeof undiciFetch>[1]) as unknown as Promise<Response>) as client.CustomFetch;
  }

  /** The discovered configuration; a failed discovery is forgotten, so the next call tries again. */
  configuration(): Promise<client.Configuration> {
    this.config ??= client
      .discovery(new URL(this.opts.issuerUrl), this.opts.clientId, this.opts.clientSecret, undefined, { [client.customFetch]: this.fetch, timeout: providerTimeoutMs / 1000 })
      .catch((err: unknown) => {
        this.config = undefined;
        throw err;
      });
    return this.config;
  }

  /** The scopes a sign-in asks for: offline_access only where the provider lists it (or lists none). */
  async scopes(): Promise<string> {
    const supported = (await this.configuration()).serverMetadata().scopes_supported;
    const base = baseScopes.filter((s) => s === 'openid' || !supported || supported.includes(s));
    return [...new Set([...base, ...this.opts.extraScopes])].join(' ');
  }

  async supportsDeviceGrant(): Promise<boolean> {
    return Boolean((await this.configuration()).serverMetadata().device_authorization_endpoint);
  }

  /**
   * The identity the tokens carry: the validated ID token's claims, completed by userinfo (Dex's
   * createIdentity). With `expectedSubject` (a refresh), an answer for another subject is refused.
   */
  async identityOf(config: client.Configuration, tokens: ProviderTokens, expectedSubject?: string): Promise<ClaimsOutcome> {
    const idClaims = (tokens.claims() ?? {}) as Record<string, unknown>;
    const subject = (idClaims.sub as string | undefined) ?? expectedSubject;
    if (expectedSubject !== undefined && subject !== expectedSubject) return { refusal: 'the identity provider answered for another subject' };
    const userinfo = config.serverMetadata().userinfo_endpoint && subject
      ? ((await client.fetchUserInfo(config, tokens.access_token, subject)) as Record<string, unknown>)
      : undefined;
    return identityFromClaims(mergeClaims(idClaims, userinfo), this.opts);
  }

  /**
   * The identity of `subject` now, by its upstream refresh token. invalid_grant is the provider's
   * refusal (the account or its grant is gone); any other failure is `unreachable`, retried later,
   * as it says nothing about the person. The refresh token returned is the rotated one, if any.
   */
  async refresh(refreshToken: string, subject: string | undefined): Promise<RefreshAnswer> {
    let tokens: ProviderTokens;
    let config: client.Configuration;
    try {
      config = await this.configuration();
      tokens = await client.refreshTokenGrant(config, refreshToken);
    } catch (err) {
      if (err instanceof client.ResponseBodyError && err.error === 'invalid_grant') return { outcome: 'refused', reason: describeError(err) };
      return { outcome: 'unreachable', reason: describeError(err) };
    }
    try {
      const found = await this.identityOf(config, tokens, subject);
      if ('refusal' in found) return { outcome: 'refused', reason: found.refusal };
      return { outcome: 'refreshed', ...found, refreshToken: tokens.refresh_token ?? refreshToken };
    } catch (err) {
      // The token endpoint answered, so a provider that rotates refresh tokens has ended the one
      // sent: the new one is kept even though the identity could not be read (userinfo down), or
      // the next refresh would send a spent token and sign the person out (found by a review).
      return { outcome: 'unreachable', reason: describeError(err), ...(tokens.refresh_token && tokens.refresh_token !== refreshToken ? { refreshToken: tokens.refresh_token } : {}) };
    }
  }
}

/** An error of the provider or of validation, in words safe to log and show (no token, no body). */
export function describeError(err: unknown): string {
  if (err instanceof client.ResponseBodyError) return `${err.error}${err.error_description ? `: ${err.error_description}` : ''}`;
  if (err instanceof Error) return err.cause instanceof Error ? `${err.message} (${err.cause.message})` : err.message;
  return String(err);
}
