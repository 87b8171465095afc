/**
 * The identity provider as this server reaches it: openid-client's discovery and configuration
 * (certified relying-party code: no JWT, JWKS or discovery of our own), over undici with the CA
 * given by --oidc-ca-file. Discovery is retried on demand: a provider that is down at start does
 * not keep the server from starting, and sign-in works once it is back.
 */
import * as client from 'openid-client';
import { Agent, fetch as undiciFetch } from 'undici';
import { baseScopes, type SignInOptions } from './options.js';

/** How long one request to the provider may take. */
const providerTimeoutMs = 10_000;

export class Provider {
  private config: Promise<client.Configuration> | undefined;
  private readonly fetch: client.CustomFetch;

  constructor(readonly opts: SignInOptions) {
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
}
