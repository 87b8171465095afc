/**
 * Identity that follows the provider: on the leader only, every Login key's identity is refreshed
 * with its upstream refresh token about once per interval (jittered, a few keys at a time). Each
 * outcome is written to the key, so every replica's authentication and the audit trail see it:
 * - refreshed: the new identity (groups, claims), identityRefresh now, a rotated refresh token;
 * - refused (invalid_grant, or the person may no longer sign in): the refused annotation, which
 *   makes the key fail authentication (src/auth/login-keys.ts) and ends its watches;
 * - unreachable: the error annotation; the key keeps working until --identity-max-staleness, and
 *   the refresh is retried with backoff.
 */
import type { Logger } from 'pino';
import { ApiError } from '../api/errors.js';
import type { ConnectorIdentity, OwnedAccessKey } from '../api/types.js';
import { defaultIdentityMaxStalenessMs, isLoginKey, refreshErrorAnnotation, refusedAnnotation } from '../auth/login-keys.js';
import { timestamp } from '../registry/context.js';
import type { Registry } from '../registry/registry.js';
import type { RefreshOutcome } from './metrics.js';
import { signInManager, type ConnectorData } from './mint.js';
import { describeError, type Provider } from './provider.js';
import { PeriodicRunner } from '../background/periodic-runner.js';

/** The audit annotation naming a refresh's outcome. */
export const refreshOutcomeAuditAnnotation = 'signin.management.service/refresh-outcome';
const connectorDataPath = 'spec.identity.connectorData';
/** First retry after the provider could not be reached; doubled up to the interval. */
const firstRetryMs = 30_000;

export interface RefreshOptions {
  intervalMs: number;
  concurrency: number;
  /** --identity-max-staleness (default 24h): a key not refreshed for longer is refused for good, never refreshed back to life. */
  maxStalenessMs?: number;
  now?: () => Date;
}

export class IdentityRefresher {
  readonly name = 'identity-refresh';
  /** The refresher's one state: its passes, on a jittered tick. */
  private readonly runner: PeriodicRunner;
  /** Keys whose last attempt failed to reach the provider: when to try again, and how often it failed. */
  private readonly backoff = new Map<string, { failures: number; nextAt: number; name: string }>();
  private readonly now: () => Date;

  constructor(
    private readonly registry: Registry,
    private readonly provider: Provider,
    private readonly log: Logger,
    private readonly opts: RefreshOptions,
  ) {
    this.now = opts.now ?? (() => new Date());
    this.runner = new PeriodicRunner({
      intervalMs: () => this.tick(),
      pass: () => this.refreshDue(),
      onError: (err) => this.log.warn({ err }, 'identity refresh pass failed; retrying at the next tick'),
    });
  }

  start(): void {
    this.runner.start();
  }

  /** No new refresh; the ones under way (a few keys) finish and write their outcome. */
  stop(): Promise<void> {
    return this.runner.stop();
  }

  /** A tenth of the interval (at most a minute), jittered, so due keys are seen on time. */
  private tick(): number {
    return Math.min(this.opts.intervalMs / 10, 60_000) * (0.8 + Math.random() * 0.4);
  }

  /**
   * The Login keys that may be due: those the identityRefresh index has refreshed at least 0.9 of
   * an interval ago (the earliest phase), and those backing off, whatever their last refresh.
   */
  private async candidates(now: number): Promise<OwnedAccessKey[]> {
    const keys = this.registry.ownedaccesskeys;
    const found = (await keys.dueBy('identityRefresh', now - this.opts.intervalMs * 0.9)) as OwnedAccessKey[];
    const seen = new Set(found.map((k) => k.metadata.uid));
    for (const [uid, back] of this.backoff) {
      if (seen.has(uid) || now < back.nextAt) continue;
      const key = (await keys.get(back.name).catch(() => undefined)) as OwnedAccessKey | undefined;
      if (key?.metadata.uid === uid) found.push(key);
      else this.backoff.delete(uid); // gone, or a new key under the name
    }
    return found;
  }

  /** One pass: every Login key that is due, a few at a time; only the due ones are read. */
  async refreshDue(): Promise<void> {
    const now = this.now().getTime();
    const due: OwnedAccessKey[] = [];
    const ended: OwnedAccessKey[] = [];
    for (const key of await this.candidates(now)) {
      if (!isLoginKey(key) || key.metadata.deletionTimestamp || key.metadata.annotations?.[refusedAnnotation] !== undefined) continue;
      const last = Date.parse(key.spec.identityRefresh ?? '') || 0;
      // Past the staleness bound authentication has refused it (its holder could not even log out
      // with it): a refresh now would bring it, and every key tied to it, back to life for whoever
      // holds a copy (found by a review). It is marked refused instead, for good.
      if (now - last > (this.opts.maxStalenessMs ?? defaultIdentityMaxStalenessMs)) {
        ended.push(key);
        continue;
      }
      // Each key's own phase, spread over a tenth of the interval so the keys of one burst of sign-ins spread out.
      const spread = (hash(key.metadata.uid ?? '') % 1000) / 10_000;
      const back = this.backoff.get(key.metadata.uid ?? '');
      if (back ? now >= back.nextAt : now - last >= this.opts.intervalMs * (0.9 + spread)) due.push(key);
    }
    for (const key of ended) {
      await this.write(key.metadata.name!, key.metadata.uid ?? '', { outcome: 'refused', reason: 'not refreshed within --identity-max-staleness: this sign-in has ended' }).catch((err: unknown) => {
        if (!(err instanceof ApiError && err.code === 404)) this.log.warn({ err, keyName: key.metadata.name }, 'could not mark a stale sign-in ended');
      });
    }
    let next = 0;
    const worker = async () => {
      while (!this.runner.stopping && next < due.length) await this.refresh(due[next++]!);
    };
    await Promise.all(Array.from({ length: Math.max(1, this.opts.concurrency) }, worker));
  }

  /** Refreshes one key and writes the outcome to it. */
  async refresh(key: OwnedAccessKey): Promise<RefreshOutcome> {
    const name = key.metadata.name!;
    const uid = key.metadata.uid ?? '';
    const outcome = await this.attempt(key);
    this.provider.metrics.refreshes.inc({ outcome: outcome.outcome });
    if (outcome.outcome === 'unreachable') {
      const failures = (this.backoff.get(uid)?.failures ?? 0) + 1;
      this.backoff.set(uid, { failures, nextAt: this.now().getTime() + Math.min(this.opts.intervalMs, firstRetryMs * 2 ** (failures - 1)), name });
    } else this.backoff.delete(uid);
    if (outcome.outcome !== 'refreshed') this.log.warn({ keyName: name, user: key.spec.user, outcome: outcome.outcome, reason: outcome.reason }, 'identity refresh did not succeed');
    try {
      return await this.writeOutcome(key, outcome);
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) return outcome.outcome;
      this.provider.metrics.refreshes.inc({ outcome: 'failed' });
      this.log.warn({ err, keyName: name }, 'could not write the outcome of an identity refresh');
      return 'failed';
    }
  }

  private async attempt(key: OwnedAccessKey): Promise<Attempt> {
    let refreshToken: string | undefined;
    try {
      const data = await this.registry.ownedaccesskeys.sealedValue(key.metadata.name!, connectorDataPath);
      refreshToken = data ? (JSON.parse(data) as ConnectorData).refreshToken : undefined;
    } catch (err) {
      return { outcome: 'unreachable', reason: `cannot read the sign-in's refresh token: ${describeError(err)}` };
    }
    if (!refreshToken) return { outcome: 'unreachable', reason: 'the identity provider gave no refresh token at sign-in (is offline_access allowed?)' };
    const answer = await this.provider.refresh(refreshToken, key.spec.identity?.userId);
    if (answer.outcome === 'unreachable' && answer.refreshToken) return { outcome: 'unreachable', reason: answer.reason, connectorData: JSON.stringify({ refreshToken: answer.refreshToken } satisfies ConnectorData) };
    if (answer.outcome !== 'refreshed') return answer;
    // A key acts for one user: a provider that now names the person otherwise ends the key, never renames it.
    if (answer.username !== key.spec.user) return { outcome: 'refused', reason: `the identity provider now names this person ${answer.username}` };
    return { outcome: 'refreshed', identity: { ...answer.identity, connectorData: JSON.stringify({ refreshToken: answer.refreshToken } satisfies ConnectorData) } };
  }

  /**
   * Writes the outcome, and says which was written. An identity the key cannot hold (more groups or
   * claims than its schema allows) would leave the old one, groups removed at the provider
   * included, until the staleness bound (found by a review): the sign-in ends instead.
   */
  private async writeOutcome(key: OwnedAccessKey, outcome: Attempt): Promise<RefreshOutcome> {
    const [name, uid] = [key.metadata.name!, key.metadata.uid ?? ''];
    try {
      await this.write(name, uid, outcome);
      return outcome.outcome;
    } catch (err) {
      if (!(outcome.outcome === 'refreshed' && err instanceof ApiError && err.code === 422)) throw err;
      const refused: Attempt = { outcome: 'refused', reason: `the identity provider's answer cannot be stored on the key (${err.message.slice(0, 200)})` };
      await this.write(name, uid, refused);
      this.log.warn({ keyName: name, user: key.spec.user, reason: refused.reason }, 'identity refresh ended the sign-in');
      return 'refused';
    }
  }

  /** Writes the outcome to the key (a read-modify-write, retried when someone wrote the key meanwhile). */
  private async write(name: string, uid: string, outcome: Attempt): Promise<void> {
    const keys = this.registry.ownedaccesskeys;
    for (let attempt = 1; ; attempt++) {
      const current = structuredClone((await keys.get(name)) as OwnedAccessKey);
      if (current.metadata.uid !== uid) return;
      const annotations = { ...(current.metadata.annotations ?? {}) };
      const now = this.now();
      if (outcome.outcome === 'refreshed') {
        current.spec.identity = outcome.identity;
        current.spec.identityRefresh = timestamp(now);
        delete annotations[refreshErrorAnnotation];
      } else if (outcome.outcome === 'refused') annotations[refusedAnnotation] = `${timestamp(now)}: ${outcome.reason}`;
      else {
        annotations[refreshErrorAnnotation] = `${timestamp(now)}: the identity provider could not be reached: ${outcome.reason}`;
        // The rotated refresh token, kept though the identity was not read: the old one is spent.
        if (outcome.connectorData && current.spec.identity) current.spec.identity = { ...current.spec.identity, connectorData: outcome.connectorData };
      }
      current.metadata.annotations = annotations;
      try {
        await keys.update(name, current, { fieldManager: signInManager, auditAnnotations: { [refreshOutcomeAuditAnnotation]: outcome.outcome, ...('reason' in outcome ? { 'signin.management.service/refresh-reason': outcome.reason } : {}) } });
        return;
      } catch (err) {
        if (!(err instanceof ApiError && err.code === 409) || attempt >= 3) throw err;
      }
    }
  }
}

type Attempt = { outcome: 'refreshed'; identity: ConnectorIdentity } | { outcome: 'refused'; reason: string } | { outcome: 'unreachable'; reason: string; connectorData?: string };

function hash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (h * 31 + s.charCodeAt(i)) >>> 0;
  return h;
}
