/**
 * The token exchange (RFC 8693): a CI job's OpenID Connect ID token, verified with jose against its
 * issuer's published keys, traded for a short-lived key on the FederatedCredential its claims
 * match. Checks, in order: the request's form, a rule trusting the token's issuer, the failure
 * budget of the issuer and subject (spent by signed tokens only), signature/iss/aud/exp/nbf/iat (jose), the rule's claims, the
 * token's single use (token-uses.ts), then the mint (mint.ts). docs/federated.md.
 */
import { createHash } from 'node:crypto';
import { decodeJwt, errors as joseErrors, jwtVerify, type JWTPayload } from 'jose';
import { ApiError } from '../api/errors.js';
import type { FederatedCredential } from '../api/types.js';
import { FailureLimiter } from '../auth/failure-limit.js';
import { systemClock, type Clock } from '../clock.js';
import type { Registry } from '../registry/registry.js';
import { currentBinding, teamBinding } from '../registry/team-binding.js';
import type { AdmissionContext } from '../server/admission/chain.js';
import type { Store } from '../store/types.js';
import { claimsMismatch } from './claims-match.js';
import { IssuerKeys } from './issuer-keys.js';
import { mintFederatedKey } from './mint.js';
import { invalidGrant, invalidRequest, invalidTarget, OAuthError } from './oauth-error.js';
import { describeJob } from './job.js';
import { TokenUses } from './token-uses.js';
import { Expiring } from '../signin/pending.js';

import { accessTokenType, credentialParameter, subjectTokenTypes, tokenExchangeGrant } from '../api/token-exchange.js';
import { namedLikeTeamHolder, teamHolderPrefix } from '../api/names.js';
import { ownerPinMissing } from '../api/public-issuers.js';

export { credentialParameter, tokenExchangeGrant };
/** Clock skew allowed on exp, nbf and iat. */
export const clockSkewSeconds = 60;
/** Signature algorithms accepted: asymmetric only (a shared secret would be a stored secret again). */
const algorithms = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

export interface TokenExchangeOptions {
  /** PEM certificates to trust for issuers (serve --federation-ca-file). */
  ca?: Buffer | string;
  now?: Clock;
  /** How soon after a JWKS fetch a token with an unknown kid may cause another (jose's cooldown; default 30 s). */
  jwksCooldownMs?: number;
  /** Failed exchanges allowed per issuer and subject before 429: 5 in 10 minutes by default. */
  failureBurst?: number;
}

export interface TokenResponse {
  access_token: string;
  issued_token_type: typeof accessTokenType;
  token_type: 'Bearer';
  expires_in: number;
}

export interface ExchangeRequester {
  sourceIP?: string;
  userAgent?: string;
}

const param = (p: Record<string, unknown>, name: string): string | undefined => (typeof p[name] === 'string' ? (p[name] as string) : undefined);

/** What an exchange learned of its token before it was refused. */
interface Checked {
  /** Set when the token verified and its claims matched no rule: a guess at the rules' claims. */
  guessed?: string;
}

/** The charged tokens remembered (firstGuess), by hash: under 1 MB at most. */
const maxGuessesKept = 10_000;
/**
 * What the exchange's memories (the failure budgets, the charged tokens) are keyed by: a hash of the
 * claims, not the claims. A token's `sub` and `jti` are its issuer's to choose, and any user may
 * write a FederatedCredential naming an issuer it runs: claims of 48 KB in 10,000 entries of each
 * would have held about 1 GB (found by a review).
 */
const memoryKey = (...parts: string[]): string => createHash('sha256').update(parts.join('\0')).digest('base64url');
/** The failure budget's window: a subject's budget refills in it, and a token charged in it is not charged again. */
const budgetWindowMs = 600_000;

export class TokenExchange {
  private readonly keys: IssuerKeys;
  private readonly uses: TokenUses;
  private readonly now: Clock;
  private readonly failures: FailureLimiter;
  /** The tokens already charged to their subject's budget (firstGuess), for one budget window. */
  private readonly guessed: Expiring<true>;

  constructor(
    private readonly registry: Registry,
    private readonly admission: AdmissionContext | undefined,
    opts: TokenExchangeOptions = {},
  ) {
    this.now = opts.now ?? systemClock;
    this.keys = new IssuerKeys({ ...(opts.ca ? { ca: opts.ca } : {}), ...(opts.jwksCooldownMs !== undefined ? { cooldownMs: opts.jwksCooldownMs } : {}), now: () => this.now().getTime() });
    this.uses = new TokenUses(registry.store);
    const burst = opts.failureBurst ?? 5;
    this.failures = new FailureLimiter({ burst, perSecond: (burst * 1000) / budgetWindowMs, now: () => this.now().getTime() });
    this.guessed = new Expiring<true>(budgetWindowMs, maxGuessesKept, () => this.now().getTime());
  }

  async exchange(params: Record<string, unknown>, requester: ExchangeRequester): Promise<TokenResponse> {
    const token = param(params, 'subject_token');
    if (!token) throw invalidRequest('subject_token is required');
    const type = param(params, 'subject_token_type');
    if (!type || !subjectTokenTypes.includes(type)) throw invalidRequest(`subject_token_type must be ${subjectTokenTypes.join(' or ')}`);
    const requested = param(params, 'requested_token_type');
    if (requested !== undefined && requested !== accessTokenType) throw invalidRequest(`requested_token_type must be ${accessTokenType}`);
    let unverified: JWTPayload;
    try {
      unverified = decodeJwt(token);
    } catch {
      throw invalidRequest('subject_token is not a JWT');
    }
    if (typeof unverified.iss !== 'string') throw invalidGrant('the token names no issuer (iss)');
    const named = param(params, credentialParameter);
    const rules = await this.rulesFor(unverified.iss, named);
    if (rules.length === 0) {
      throw named !== undefined
        ? invalidTarget(`no FederatedCredential named ${JSON.stringify(named)} trusts tokens of this issuer`)
        : invalidGrant(`no FederatedCredential trusts tokens of this issuer for an exchange naming none (a rule acting for a user answers only when named with ${credentialParameter})`);
    }
    const budgetKey = memoryKey(unverified.iss, typeof unverified.sub === 'string' ? unverified.sub : '');
    const wait = this.failures.retryAfter(budgetKey);
    if (wait !== undefined) throw new OAuthError(429, 'slow_down', `too many failed exchanges for this issuer and subject; retry after ${wait} seconds`, wait);
    const checked: Checked = {};
    try {
      return await this.verifyAndMint(token, unverified.iss, rules, named !== undefined, requester, checked);
    } catch (err) {
      // Only a guess at a rule's claims spends its subject's budget: a token the issuer signed, for
      // a trusted audience, unexpired, whose claims match no rule, each such token once. Anyone can
      // write an unsigned token naming a subject (a CI job's `sub` is predictable), and anyone may
      // hold one expired token of it (an old CI log) or one signed for another audience (AWS,
      // Vault): charging those, again at each replay, let a stranger lock the job out (found by
      // two reviews).
      if (err instanceof OAuthError && checked.guessed !== undefined && this.firstGuess(memoryKey(unverified.iss, checked.guessed))) this.failures.fail(budgetKey);
      throw err;
    }
  }

  /** The live rules trusting `issuer` (only the named one, when a name is given). */
  private async rulesFor(issuer: string, named: string | undefined): Promise<FederatedCredential[]> {
    // By the issuer index: an exchange costs the rules of its issuer, not a read of every rule
    // (the issuer is read from the token before anything is verified).
    const items = await this.registry.federatedcredentials.byField('issuer', issuer);
    // A rule acting for a user answers only an exchange that names it. Any user may write rules for
    // themselves, so one matching broadly (every ref of every repository) would otherwise answer
    // another team's jobs whose own rule did not match (their CI then acting as that user, and the
    // keys it made that user's) or make every unnamed exchange ambiguous (found by a review).
    return (items as FederatedCredential[]).filter((r) => (named === undefined ? !r.spec.user : r.metadata.name === named) && !r.metadata.deletionTimestamp);
  }

  /** Whether this token (issuer and jti) is charged for the first time in the window; a flood of tokens forgets the oldest first. */
  private firstGuess(token: string): boolean {
    if (this.guessed.peek(token)) return false;
    this.guessed.put(token, true);
    return true;
  }

  /** `checked.guessed` is the token's jti once it verified and its claims matched no rule. */
  private async verifyAndMint(token: string, issuer: string, rules: FederatedCredential[], named: boolean, requester: ExchangeRequester, checked: Checked): Promise<TokenResponse> {
    const keys = await this.keys.keysOf(issuer).catch(() => {
      throw new OAuthError(503, 'temporarily_unavailable', "the issuer's discovery document or keys could not be fetched; retry later");
    });
    const now = this.now();
    const audiences = [...new Set(rules.flatMap((r) => r.spec.audiences))];
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keys, { issuer, audience: audiences, algorithms, clockTolerance: clockSkewSeconds, currentDate: now, requiredClaims: ['exp', 'iat', 'jti'] }));
    } catch (err) {
      throw verificationRefusal(err);
    }
    if (payload.iat! > now.getTime() / 1000 + clockSkewSeconds) throw invalidGrant('the token was issued in the future (iat)');
    const tokenAud = [payload.aud ?? []].flat();
    const candidates = rules.filter((r) => r.spec.audiences.some((a) => tokenAud.includes(a)));
    const matching = candidates.filter((r) => claimsMismatch(r.spec.claims, payload) === undefined);
    if (matching.length === 0) {
      // The caller named the rule: the check that failed is about the token it holds, not news of other rules.
      const why = named && candidates.length === 1 ? claimsMismatch(candidates[0]!.spec.claims, payload)! : 'the token\'s claims match no FederatedCredential';
      checked.guessed = payload.jti!;
      throw invalidGrant(why);
    }
    if (matching.length > 1) throw invalidTarget(`the token matches more than one FederatedCredential: name one with ${credentialParameter}`);
    const rule = matching[0]!;
    const stored = storedRuleRefusal(rule);
    if (stored) throw invalidGrant(stored);
    const stale = await this.staleTeam(rule);
    if (stale) throw invalidGrant(stale);
    const ttl = Math.min(rule.spec.ttl ?? 3600, Math.floor(payload.exp! - now.getTime() / 1000));
    if (ttl < 1) throw invalidGrant('the token has expired');
    if (!(await this.uses.claim(issuer, payload.jti!, payload.exp! * 1000))) throw invalidGrant('the token was exchanged already: a job token is exchanged once (jti)');
    const job = describeJob(payload);
    const minted = await mintFederatedKey(this.registry, rule, job, ttl, { username: `job:${job}`, ...requester }, this.admission).catch(async (err: unknown) => {
      // A refusal (4xx) stored nothing: the token is not spent. Any other failure may have stored
      // the key (a commit whose answer was lost), so the token stays used.
      if (err instanceof ApiError && err.code >= 400 && err.code < 500) await this.uses.release(issuer, payload.jti!);
      // The rule went (or changed) while the exchange ran: nothing is minted on it.
      if (err instanceof ApiError && err.code === 422) throw invalidGrant('the FederatedCredential is gone');
      throw err;
    });
    return { access_token: minted.key, issued_token_type: accessTokenType, token_type: 'Bearer', expires_in: minted.ttlSeconds };
  }

  /**
   * Why a rule for a team trusts nothing now, if it does not: the team it was bound to (by uid,
   * registry/team-binding.ts) is gone, or being deleted, and a team created since under its name
   * is another team. Until the garbage collector removes such a rule, a key it minted was bound to
   * the new team and acted with its roles (found by a review); team keys are refused the same way
   * (auth/authenticate.ts keyRefusal).
   */
  private async staleTeam(rule: FederatedCredential): Promise<string | undefined> {
    const team = rule.spec.team;
    if (!team) return undefined;
    const bound = teamBinding(rule, team);
    // The binding a key written now would get (missing or terminating: a reason instead).
    const live = await currentBinding(this.registry.teams.ctx, team);
    if (!bound || typeof live === 'string' || live.uid !== bound.uid) return `the FederatedCredential's team "${team}" was deleted: a team created since under its name is not the one the rule trusts`;
    return undefined;
  }

  /** Forgets the records of tokens that have expired (the leader's maintenance), writing `through` its fenced store. */
  collectUses(through: Store): Promise<number> {
    return new TokenUses(through).collect(this.now().getTime());
  }
}

/**
 * Why a rule stored before a check its writes now meet is not used, if it is not; said before the
 * token's single use. Such a rule stays stored (writes to it are ratcheted), so the exchange judges it.
 */
export function storedRuleRefusal(rule: FederatedCredential): string | undefined {
  // Before public issuers' rules had to pin the jobs' owner (api/public-issuers.ts), it would
  // still trust every owner's jobs (found by a review).
  const unpinned = ownerPinMissing(rule.spec.issuer, rule.spec.claims);
  if (unpinned) return `the FederatedCredential matching the token was stored before rules had to pin whose jobs they trust, and is not used until it does: ${unpinned}`;
  // Before user names like `team:<name>` were refused (api/names.ts): a key for that user would be refused.
  if (namedLikeTeamHolder(rule.spec.user)) return `the FederatedCredential's spec.user "${rule.spec.user}" is named like a team's keys (${teamHolderPrefix}<name>), which no key may act for: set spec.team, or another user`;
  return undefined;
}

/** jose's refusal, as the check that failed. */
function verificationRefusal(err: unknown): OAuthError {
  if (err instanceof joseErrors.JWTExpired) return invalidGrant('the token has expired');
  if (err instanceof joseErrors.JWTClaimValidationFailed) {
    if (err.claim === 'aud') return invalidGrant("the token's audience is not one a FederatedCredential of this issuer accepts");
    if (err.claim === 'nbf') return invalidGrant('the token is not valid yet (nbf)');
    if (err.claim === 'iss') return invalidGrant("the token's issuer does not match");
    return invalidGrant(`the token's ${err.claim} claim is missing or invalid`);
  }
  if (err instanceof joseErrors.JWKSNoMatchingKey || err instanceof joseErrors.JWSSignatureVerificationFailed) return invalidGrant("the token's signature does not verify with the issuer's published keys");
  if (err instanceof joseErrors.JOSEAlgNotAllowed) return invalidGrant("the token's signature algorithm is not accepted");
  // jose's bare JOSEError is its fetch's (a key set answering other than 200), not the token's fault.
  if (err instanceof joseErrors.JWKSTimeout || err instanceof joseErrors.JWKSInvalid || !(err instanceof joseErrors.JOSEError) || err.code === 'ERR_JOSE_GENERIC') return new OAuthError(503, 'temporarily_unavailable', "the issuer's keys could not be fetched; retry later");
  return invalidGrant('the token does not verify');
}

