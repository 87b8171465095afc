/**
 * Keeps each open watch within what its key may read. A watch is authorized once, when it begins;
 * from then on its key is authenticated again (without counting as a use) before the watch sends
 * an event of a revision newer than its last check, and every `checkIntervalMs` whatever it sends.
 * The check is the authentication every request makes, so whatever refuses a key (expiry, disabled,
 * deleted, its team gone, a sign-in that can no longer be refreshed) ends its watches too.
 *
 * States of a kept watch: `open` (last check passed at `verifiedAt`) -> `ended` (with the Status
 * its stream ends on). Invariant: an event of revision R is sent only after a check whose answer
 * is at least as new as R found the key authenticated, its scope still allowing the watch, and its
 * read basis (authorize.ts readBasis) the one the watch began with. A watch of a kind outside this
 * API (listed-kinds.ts: always empty, so it has no rights to lose) is kept by its key alone.
 */
import { ApiError, expired, type Status } from '../../api/errors.js';
import type { Identity } from '../../auth/identity.js';
import type { Resource } from '../../auth/roles.js';
import { authorizeScope, forbiddenBy } from '../../auth/decision.js';
import { impersonate, type ImpersonationAsked } from '../../auth/impersonation.js';
import type { AuthContext } from '../auth/guard.js';

/** How often an open watch's key is checked when no event asks: a key expires, a watch ends within this (and a check). */
export const checkIntervalMs = 500;

/** A check's answer: the revision it is at least as new as, or the Status that ends the watch; undefined: try again later. */
type Verdict = { ok: true; revision: number } | { ok: false; status: Status } | undefined;

type Reauthenticate = AuthContext['authenticator']['reauthenticate'];

export class KeptWatch {
  /** A store revision up to which events may be sent. */
  private verifiedAt = 0;
  private checking: Promise<Verdict> | undefined;
  /** Set once: the Status the stream ends with. */
  ended: Status | undefined;
  private onEnd: (status: Status) => void = () => {};

  constructor(
    private readonly auth: AuthContext,
    private readonly reauthenticate: () => ReturnType<Reauthenticate>,
    private readonly resource: Resource | undefined,
    private readonly who: Identity,
    private readonly basis: string | undefined,
  ) {}

  /** What to call, with the Status to end on, when a check ends the watch (its connection's `end`). */
  whenEnded(end: (status: Status) => void): void {
    this.onEnd = end;
    if (this.ended) end(this.ended);
  }

  /**
   * Resolves true once the key was found, at `revision` or later, still holding what the watch
   * began with; false when the watch is to end (then `ended` says why). A store out of reach
   * holds the event back (fail closed) and asks again, as long as `alive` says the client is there.
   */
  async admit(revision: number, alive: () => boolean): Promise<boolean> {
    while (!this.ended && alive()) {
      if (this.verifiedAt >= revision) return true;
      const verdict = await this.check();
      if (verdict === undefined) await new Promise((r) => setTimeout(r, checkIntervalMs));
    }
    return false;
  }

  /** One check (shared by whoever asks while it runs); ends the watch when the key no longer holds. */
  check(): Promise<Verdict> {
    this.checking ??= this.verify().then((verdict) => {
      this.checking = undefined;
      if (verdict?.ok) this.verifiedAt = Math.max(this.verifiedAt, verdict.revision);
      else if (verdict && !this.ended) {
        this.ended = verdict.status;
        this.onEnd(verdict.status);
      }
      return verdict;
    });
    return this.checking;
  }

  private async verify(): Promise<Verdict> {
    let identity: Identity;
    let revision: number;
    try {
      ({ identity, revision } = await this.reauthenticate());
    } catch (err) {
      // The same 401 a GET with this key would get now; a store or index out of reach decides nothing.
      // (403: the impersonation it was opened with is no longer allowed.)
      if (err instanceof ApiError && (err.code === 401 || err.code === 403)) return { ok: false, status: err.toStatus() };
      return undefined;
    }
    if (this.resource === undefined) return { ok: true, revision };
    const { authorizer } = this.auth;
    // The scope step of authorize(), as the watch request met it; its objects are the basis's to judge.
    const watch = { user: identity, verb: 'watch' as const, resource: this.resource };
    const refused = authorizeScope(authorizer, watch);
    if (refused) return { ok: false, status: forbiddenBy(authorizer, watch, refused).toStatus() };
    if (authorizer.readBasis(identity, this.resource) !== this.basis) {
      // What it may read changed without an event for each object it gains or loses: list again.
      return { ok: false, status: expired(`the permissions of ${this.who.name} on ${this.resource} changed since this watch began; list again`).toStatus() };
    }
    return { ok: true, revision };
  }
}

/** The kept watches of one server, checked on one timer. */
export class WatchKeeper {
  private readonly kept = new Set<KeptWatch>();
  private timer: NodeJS.Timeout | undefined;
  /**
   * Authentications under way, by Authorization header: the watches of one key share one. Sharing
   * one that began before an event is safe: its answer says the revision it is at, and a watch
   * whose event is newer asks again (KeptWatch.admit).
   */
  private readonly inFlight = new Map<string, ReturnType<Reauthenticate>>();

  constructor(
    private readonly auth: AuthContext,
    private readonly intervalMs = checkIntervalMs,
  ) {}

  /** Keeps a watch that `who` opens now with the key in `authorization`; `resource` undefined: a kind outside this API. */
  keep(authorization: string | undefined, resource: Resource | undefined, who: Identity, asked?: ImpersonationAsked): KeptWatch {
    const basis = resource === undefined ? undefined : this.auth.authorizer.readBasis(who, resource);
    // A watch opened as someone else is checked as that someone, the impersonation itself judged again.
    const again = async () => {
      const answer = await this.reauthenticate(authorization ?? '');
      return asked ? { ...answer, identity: impersonate(answer.identity, asked, this.auth.authorizer, this.auth.teams) } : answer;
    };
    const kept = new KeptWatch(this.auth, again, resource, who, basis);
    this.kept.add(kept);
    if (!this.timer) {
      this.timer = setInterval(() => {
        for (const k of this.kept) void k.check();
      }, this.intervalMs);
      // The watches' connections keep the process alive, not this timer.
      this.timer.unref();
    }
    return kept;
  }

  private reauthenticate(authorization: string): ReturnType<Reauthenticate> {
    let answer = this.inFlight.get(authorization);
    if (!answer) {
      answer = this.auth.authenticator.reauthenticate(authorization);
      this.inFlight.set(authorization, answer);
      const done = () => this.inFlight.delete(authorization);
      answer.then(done, done);
    }
    return answer;
  }

  release(kept: KeptWatch): void {
    this.kept.delete(kept);
    if (this.kept.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }
}
