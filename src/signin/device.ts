/**
 * Headless sign-in (`teamkeys login --device`): the provider's device authorization grant (RFC
 * 8628), with the server as the client. The CLI starts a session bound to its PKCE challenge and
 * shows the person the provider's code and address; the server polls the provider; the CLI polls
 * the server with its verifier and gets the key in a response body once the person approved.
 */
import * as client from 'openid-client';
import { ApiError, badRequest, tooManyRequests } from '../api/errors.js';
import type { Requester } from '../registry/write-observer.js';
import { Expiring, randomToken, verifierMatches } from './pending.js';
import { describeError } from './provider.js';
import type { SignIn, Vouched } from './sign-in.js';
import type { MintedKey } from './mint.js';
import { ownBudget, scopeWords, type BudgetScope } from '../auth/failure-limit.js';
import { ConcurrentLimit } from '../auth/concurrent-limit.js';

type Session = { challenge: string } & ({ state: 'pending' } | { state: 'vouched'; vouched: Omit<Vouched, 'challenge' | 'redirectUri'> } | { state: 'refused'; message: string });

export interface DeviceStart {
  session: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete?: string;
  expires_in: number;
  /** Seconds the CLI should wait between polls. */
  interval: number;
}

export type DevicePoll = { status: 'pending' } | ({ status: 'done' } & MintedKey);

/**
 * Device sign-ins waiting for approval at once. Anyone may start one without a key, and each holds
 * a poller against the provider until its code expires: bounded, so that cannot grow without end.
 */
export const defaultMaxWaitingDeviceSignIns = 200;
/** Of those, how many one client address may hold: one anonymous client cannot take every place. */
export const defaultMaxWaitingPerClient = 5;

export class DeviceSignIn {
  private readonly sessions = new Expiring<Session>(15 * 60_000);
  private waiting = 0;
  /** Waiting sign-ins per budget of a client. */
  private readonly byClient: ConcurrentLimit;

  constructor(
    private readonly signIn: SignIn,
    private readonly maxWaiting = defaultMaxWaitingDeviceSignIns,
    maxPerClient = defaultMaxWaitingPerClient,
    /** The budgets a client spends: its own by default; the server's, its address and networks (server/client-address.ts). */
    scopes: (client: string) => readonly BudgetScope[] = ownBudget,
  ) {
    this.byClient = new ConcurrentLimit(maxPerClient, scopes);
  }

  /**
   * The refusal a start from `client` would meet now, if any. The route asks before it reads the
   * body (an anonymous client at its bound has its body neither read nor parsed); start asks again.
   */
  refusal(client: string): ApiError | undefined {
    const full = this.byClient.full(client);
    if (full) {
      const most = this.byClient.perClient * full.share;
      return tooManyRequests(`too many device sign-ins from ${scopeWords(full)} are waiting for approval (at most ${most}); try again in a minute`, 60);
    }
    if (this.waiting >= this.maxWaiting) return tooManyRequests('too many device sign-ins are waiting for approval; try again in a minute', 60);
    return undefined;
  }

  async start(body: Record<string, unknown>, client = ''): Promise<DeviceStart> {
    if (typeof body.code_challenge !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(body.code_challenge)) throw badRequest('code_challenge (S256 of a PKCE verifier) is required');
    // Counted before the first await, so concurrent starts cannot all pass the bounds.
    const refused = this.refusal(client);
    if (refused) throw refused;
    this.waiting++;
    const release = this.byClient.take(client);
    // Once only, as `release` is: a second call would free a place another sign-in holds.
    let finished = false;
    const done = () => {
      if (finished) return;
      finished = true;
      this.waiting--;
      release();
    };
    try {
      return await this.begin(body.code_challenge, done);
    } catch (err) {
      done();
      throw err;
    }
  }

  private async begin(challenge: string, done: () => void): Promise<DeviceStart> {
    const provider = this.signIn.provider;
    if (!(await provider.supportsDeviceGrant())) {
      throw badRequest("the identity provider does not offer the device authorization grant (its discovery document has no device_authorization_endpoint): sign in with teamkeys login --no-browser");
    }
    const config = await provider.configuration();
    const response = await client.initiateDeviceAuthorization(config, { scope: await provider.scopes() });
    const id = randomToken();
    const session: Session = { challenge, state: 'pending' };
    this.sessions.put(id, session);
    void this.await(id, config, response).finally(done);
    return {
      session: id,
      user_code: response.user_code,
      verification_uri: response.verification_uri,
      ...(response.verification_uri_complete ? { verification_uri_complete: response.verification_uri_complete } : {}),
      expires_in: response.expires_in,
      interval: response.interval ?? 5,
    };
  }

  /** Polls the provider until the person approved, refused, or the code expired. */
  private async await(id: string, config: client.Configuration, response: client.DeviceAuthorizationResponse): Promise<void> {
    const settle = (next: Session) => {
      const current = this.sessions.peek(id);
      if (current) this.sessions.put(id, { ...next, challenge: current.challenge } as Session);
    };
    try {
      const tokens = await client.pollDeviceAuthorizationGrant(config, response);
      const outcome = await this.signIn.provider.identityOf(config, tokens);
      if ('refusal' in outcome) return settle({ state: 'refused', message: outcome.refusal, challenge: '' });
      settle({ state: 'vouched', challenge: '', vouched: { ...outcome, via: 'with teamkeys login --device', ...(tokens.refresh_token ? { refreshToken: tokens.refresh_token } : {}) } });
    } catch (err) {
      settle({ state: 'refused', challenge: '', message: `the identity provider did not approve the sign-in: ${describeError(err)}` });
    }
  }

  async poll(body: Record<string, unknown>, requester: Omit<Requester, 'username'>): Promise<DevicePoll> {
    const session = this.sessions.peek(body.session);
    if (!session) throw badRequest('the device sign-in is unknown or has expired: run teamkeys login --device again');
    if (!verifierMatches(body.code_verifier, session.challenge)) throw badRequest('code_verifier does not match the code_challenge this sign-in started with');
    if (session.state === 'pending') return { status: 'pending' };
    this.sessions.take(body.session);
    if (session.state === 'refused') {
      this.signIn.provider.metrics.signIns.inc({ result: 'refused' });
      throw new ApiError(403, 'Forbidden', session.message);
    }
    return { status: 'done', ...(await this.signIn.mint(session.vouched, body.replaces, requester)) };
  }
}
