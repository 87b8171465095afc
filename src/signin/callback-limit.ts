/**
 * The bounds of the browser sign-in's callback (GET /auth/callback). Anyone may start a sign-in
 * (GET /auth/login costs nothing and hands out a fresh state), and each callback with that state
 * and any code makes the server call the provider's token endpoint with the client secret, for up
 * to 10 seconds: a review had one address hold 60 such calls at once. So callbacks are bounded
 * before the provider is asked: a few at once per client address (and its networks), a number at
 * once for the whole server, and a budget of failed ones per address (a person whose sign-in fails
 * tries again a few times; a script that sends codes it made up spends the budget at once).
 */
import { ApiError, tooManyRequests } from '../api/errors.js';
import { ConcurrentLimit } from '../auth/concurrent-limit.js';
import { FailureLimiter, ownBudget, scopeWords, type BudgetScope } from '../auth/failure-limit.js';

/** Callbacks one client address may have at the provider at once (a person has one). */
export const defaultCallbacksPerClient = 4;
/** Callbacks the whole server has at the provider at once. */
export const defaultCallbacksInFlight = 64;
/** Failed callbacks one address may make at once, then one every 10 seconds. */
export const defaultCallbackFailures = { burst: 10, perSecond: 0.1 };

export interface CallbackLimitOptions {
  perClient?: number;
  inFlight?: number;
  failures?: { burst: number; perSecond: number };
  /** The budgets a client spends: its own by default; the server's, its address and networks (server/client-address.ts). */
  scopes?: (client: string) => readonly BudgetScope[];
}

export class CallbackLimit {
  private readonly byClient: ConcurrentLimit;
  private readonly failures: FailureLimiter;
  private readonly inFlight: number;
  private held = 0;

  constructor(opts: CallbackLimitOptions = {}) {
    const scopes = opts.scopes ?? ownBudget;
    this.byClient = new ConcurrentLimit(opts.perClient ?? defaultCallbacksPerClient, scopes);
    this.failures = new FailureLimiter({ ...(opts.failures ?? defaultCallbackFailures), scopes });
    this.inFlight = opts.inFlight ?? defaultCallbacksInFlight;
  }

  /** Why a callback from `client` is refused now (429), if it is: asked before anything else is done with it. */
  refusal(client: string): ApiError | undefined {
    const wait = this.failures.retryAfter(client);
    if (wait !== undefined) return tooManyRequests('too many failed sign-ins from this address; try again later', wait);
    const full = this.byClient.full(client);
    if (full) return tooManyRequests(`too many sign-ins from ${scopeWords(full)} are being finished at once; try again`, 1);
    if (this.held >= this.inFlight) return tooManyRequests('too many sign-ins are being finished at once; try again', 1);
    return undefined;
  }

  /** Takes a place (the caller asked `refusal` first, with no await between); the function given back returns it, once, saying whether the sign-in failed. */
  take(client: string): (failed: boolean) => void {
    const giveBack = this.byClient.take(client);
    this.held++;
    let done = false;
    return (failed) => {
      if (done) return;
      done = true;
      giveBack();
      this.held--;
      if (failed) this.failures.fail(client);
    };
  }
}
