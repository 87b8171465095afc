/**
 * The server as an OpenID Connect relying party, for `teamkeys login` (RFC 8252, a native app):
 *
 * 1. start: the CLI sends the person's browser here with its loopback redirect URI, its own state
 *    and a PKCE challenge; the server seals them into a cookie of that browser (sealed-start.ts,
 *    no server memory) and sends it to the provider (authorization code with the server's own
 *    PKCE, state and nonce).
 * 2. callback: the provider sends the browser back; openid-client checks state, exchanges the code,
 *    validates the ID token (issuer, audience, signature, nonce) and fetches userinfo. The server
 *    keeps the result under a one-time code and sends the browser to the CLI's loopback address
 *    with that code, never with a key.
 * 3. exchange: the CLI posts the code with its PKCE verifier; the key is minted and returned in the
 *    response body. A code is taken once, and a wrong verifier spends it.
 */
import type { Logger } from 'pino';
import * as client from 'openid-client';
import { badRequest } from '../api/errors.js';
import type { Registry } from '../registry/registry.js';
import type { AdmissionContext } from '../server/admission/chain.js';
import type { Requester } from '../registry/write-observer.js';
import type { ConnectorIdentity } from '../api/types.js';
import { mintLoginKey, type MintedKey } from './mint.js';
import type { SignInOptions } from './options.js';
import { FieldCipher } from '../api/field-cipher.js';
import { Expiring, randomToken, verifierMatches } from './pending.js';
import { SealedStarts } from './sealed-start.js';
import { describeError, type Provider } from './provider.js';

/** What the CLI asked for when it started a sign-in. */
interface CliRequest {
  redirectUri: string;
  state: string;
  challenge: string;
}

interface Started extends CliRequest {
  verifier: string;
  nonce: string;
  callbackUrl: string;
}

/** A person the provider vouched for, waiting for the CLI to exchange its code. */
export interface Vouched {
  username: string;
  identity: ConnectorIdentity;
  refreshToken?: string;
  challenge: string;
  redirectUri: string;
  via: string;
}

/** What the server lends sign-in: its admission chain (for the mint) and its encryption key (for sealed starts). */
export interface SignInServices {
  admission?: AdmissionContext;
  cipher?: FieldCipher;
}

/** Where the browser goes next: the provider, or the CLI's loopback address. */
export type Next = { redirect: string } | { status: number; message: string };

/** A sign-in left unfinished lapses: 10 minutes to get through the provider, 2 for the CLI to exchange. */
const startTtlMs = 10 * 60_000;
const codeTtlMs = 2 * 60_000;
/** What a pending sign-in keeps of the CLI's request is bounded, as anyone may start one without a key. */
const maxStateLength = 512;
const maxRedirectLength = 1024;

/**
 * RFC 8252 7.3: the loopback redirect of a native app, on any port; http, as there is no certificate
 * for it. Only the path `teamkeys login` listens on, `/callback`, with no query: any other path on a
 * loopback port may be another program's, and `kubectl proxy` forwards paths into the cluster, so a
 * link whose redirect named such a path sent the person's code to whoever runs behind it (found by
 * a review).
 */
export const loopbackCallbackPath = '/callback';

export function loopbackRedirect(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.length > maxRedirectLength) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  const loopback = ['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname);
  return url.protocol === 'http:' && loopback && url.port !== '' && url.pathname === loopbackCallbackPath && !url.search && !url.username && !url.password && !url.hash ? url.toString() : undefined;
}

const cliRedirect = (to: string, params: Record<string, string>): Next => {
  const url = new URL(to);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return { redirect: url.toString() };
};

export class SignIn {
  private readonly started: SealedStarts<Started>;
  private readonly vouched = new Expiring<Vouched>(codeTtlMs);
  /**
   * The states whose callback came, for as long as their sealed start lasts: a callback's URL and
   * cookie replayed (from a proxy's log, a shared screen) each cost a request to the provider's
   * token endpoint, for ten minutes (found by a review). One replica's memory: another replica may
   * take one replay more.
   */
  private readonly finished: Expiring<true>;
  /** The server's admission chain, which every mint meets (mint.ts names what it is exempt from). */
  private readonly admission: AdmissionContext | undefined;

  constructor(
    private readonly registry: Registry,
    /** The provider the flows sign in with: it makes every identity and counts every sign-in. */
    readonly provider: Provider,
    private readonly log: Logger,
    private readonly now: () => Date = () => new Date(),
    services: SignInServices = {},
  ) {
    this.admission = services.admission;
    // Without the server's key (a test's SignIn), a key of this process's own: one replica only.
    this.started = new SealedStarts(services.cipher ?? FieldCipher.ephemeral(), startTtlMs, () => this.now().getTime());
    this.finished = new Expiring<true>(startTtlMs, undefined, () => this.now().getTime());
  }

  get opts(): SignInOptions {
    return this.provider.opts;
  }

  private get metrics() {
    return this.provider.metrics;
  }

  /** Step 1: the provider's authorization URL for this CLI's request, and the cookie that carries the sign-in sealed (sealed-start.ts). */
  async start(query: Record<string, unknown>, callbackUrl: string, secure = true): Promise<{ url: string; setCookie: string }> {
    const redirectUri = loopbackRedirect(query.redirect_uri);
    if (!redirectUri) throw badRequest('redirect_uri must be a loopback address of this machine with a port and the path /callback, like http://127.0.0.1:PORT/callback (RFC 8252)');
    if (query.code_challenge_method !== 'S256' || typeof query.code_challenge !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(query.code_challenge)) {
      throw badRequest('code_challenge (S256 of a PKCE verifier) and code_challenge_method=S256 are required');
    }
    if (typeof query.state !== 'string' || query.state.length < 16 || query.state.length > maxStateLength) {
      throw badRequest(`state (at least 16 random characters) is required, at most ${maxStateLength}`);
    }
    if (callbackUrl.length > maxRedirectLength) throw badRequest('the Host this server was reached by is too long to sign in with');
    const config = await this.provider.configuration();
    const verifier = client.randomPKCECodeVerifier();
    const state = randomToken();
    const nonce = client.randomNonce();
    const { setCookie } = this.started.seal(state, { redirectUri, state: query.state, challenge: query.code_challenge, verifier, nonce, callbackUrl }, secure);
    const url = client
      .buildAuthorizationUrl(config, {
        redirect_uri: callbackUrl,
        scope: await this.provider.scopes(),
        state,
        nonce,
        code_challenge: await client.calculatePKCECodeChallenge(verifier),
        code_challenge_method: 'S256',
      })
      .toString();
    return { url, setCookie };
  }

  /** Step 2: the provider's answer, checked against the browser's sealed start, and kept under a one-time code for the CLI. */
  async callback(currentUrl: URL, cookieHeader: string | undefined): Promise<Next> {
    const state = currentUrl.searchParams.get('state');
    const started = this.started.open(state, cookieHeader);
    if (!started) {
      this.metrics.signIns.inc({ result: 'invalid' });
      return { status: 400, message: 'This sign-in is unknown or has expired (state does not match one this browser started here). Run teamkeys login again.' };
    }
    if (this.finished.peek(state)) {
      this.metrics.signIns.inc({ result: 'invalid' });
      return { status: 400, message: 'This sign-in was finished already: a callback is answered once. Run teamkeys login again.' };
    }
    const back = (params: Record<string, string>) => cliRedirect(started.redirectUri, { ...params, state: started.state });
    const providerError = currentUrl.searchParams.get('error');
    if (providerError) {
      this.metrics.signIns.inc({ result: 'failed' });
      return back({ error: providerError, error_description: `the identity provider said: ${currentUrl.searchParams.get('error_description') ?? providerError}` });
    }
    // Remembered only for a callback that reaches the provider: callbacks with an error, which cost
    // nothing, would otherwise push the remembered states out of their bounded memory (a review).
    this.finished.put(state!, true);
    let vouched: Vouched;
    try {
      const config = await this.provider.configuration();
      // openid-client wants the URL the provider redirected to: the registered callback plus its query.
      const answered = new URL(started.callbackUrl);
      answered.search = currentUrl.search;
      const tokens = await client.authorizationCodeGrant(config, answered, {
        pkceCodeVerifier: started.verifier,
        expectedState: currentUrl.searchParams.get('state')!,
        expectedNonce: started.nonce,
        idTokenExpected: true,
      }, { redirect_uri: started.callbackUrl });
      const outcome = await this.provider.identityOf(config, tokens);
      if ('refusal' in outcome) {
        this.metrics.signIns.inc({ result: 'refused' });
        this.log.info({ refusal: outcome.refusal }, 'sign-in refused');
        return back({ error: 'access_denied', error_description: outcome.refusal });
      }
      vouched = { ...outcome, challenge: started.challenge, redirectUri: started.redirectUri, via: 'with teamkeys login', ...(tokens.refresh_token ? { refreshToken: tokens.refresh_token } : {}) };
    } catch (err) {
      this.metrics.signIns.inc({ result: 'failed' });
      this.log.warn({ error: describeError(err) }, 'sign-in failed at the identity provider');
      return back({ error: 'access_denied', error_description: `the identity provider's answer was not accepted: ${describeError(err)}` });
    }
    const code = randomToken();
    this.vouched.put(code, vouched);
    return back({ code });
  }

  /** The Set-Cookie value that removes a started sign-in's cookie once its callback came. */
  clearStart(state: string): string {
    return this.started.clear(state);
  }

  /** Step 3: the key, for the CLI holding the verifier of the challenge it started with. */
  async exchange(body: Record<string, unknown>, requester: Omit<Requester, 'username'>): Promise<MintedKey> {
    const vouched = this.vouched.take(body.code);
    if (!vouched) throw badRequest('the code is unknown, expired or already used: run teamkeys login again');
    if (!verifierMatches(body.code_verifier, vouched.challenge)) {
      this.metrics.signIns.inc({ result: 'invalid' });
      throw badRequest('code_verifier does not match the code_challenge this sign-in started with');
    }
    if (body.redirect_uri !== undefined && body.redirect_uri !== vouched.redirectUri) throw badRequest('redirect_uri does not match the one this sign-in started with');
    return this.mint(vouched, body.replaces, requester);
  }

  /** Mints the key of a person the provider vouched for (the browser flow and the device flow). */
  async mint(vouched: Omit<Vouched, 'challenge' | 'redirectUri'>, replaces: unknown, requester: Omit<Requester, 'username'>): Promise<MintedKey> {
    const minted = await mintLoginKey(this.registry, {
      username: vouched.username,
      identity: vouched.identity,
      ...(vouched.refreshToken ? { refreshToken: vouched.refreshToken } : {}),
      ttlSeconds: this.opts.loginKeyTtlSeconds,
      ...(typeof replaces === 'string' && replaces ? { replaces } : {}),
      requester: { ...requester, username: vouched.username },
      via: vouched.via,
      ...(this.opts.usernamePrefix === '' ? { unprefixed: true } : {}),
    }, this.now(), this.admission);
    this.metrics.signIns.inc({ result: 'success' });
    this.log.info({ user: minted.user, keyName: minted.name, groups: vouched.identity.groups }, 'signed in');
    return minted;
  }
}
