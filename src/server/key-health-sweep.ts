/**
 * The key health sweep: once at start and then every minute, off the request path, over the keys
 * in the watch cache. On every replica it sets the /metrics gauges of keys expiring within 1, 7
 * and 30 days and of expired keys not yet removed, so whichever replica Prometheus scrapes answers
 * the same. On the replica holding the background-work lease only (so replicas neither log twice
 * nor race each other's writes) it logs a warning once per key as the key enters the --warn-expiry
 * window, and, with --disable-unused-after, disables keys unused for longer than that.
 *
 * A sweep reads only the keys it may act on, from the watch cache's time indexes (registry/indexes.ts):
 * keys whose stored expiry falls within the widest window (30 days, or --warn-expiry when wider),
 * and with --disable-unused-after the keys whose stored last use is older than that. A use known
 * only in memory moves both later, never earlier, so no key the sweep acts on is left out; each
 * key read is then judged on its own health. Only when a key about to be disabled is a working
 * management-admin key does the sweep read every key, to spare the longest-lasting one.
 */
import type { Logger } from 'pino';
import type { OwnedAccessKey } from '../api/types.js';
import { defaultWarnExpiryMs, expiresWithin, formatSpan, isoSeconds, keyHealth, unusedFor, type KeyHealth } from '../auth/key-health.js';
import { keyRefusal } from '../auth/authenticate.js';
import { scopeNarrows } from '../auth/scope.js';
import { reEnabledAtAnnotation } from '../api/re-enable.js';
import { disabledReasonAnnotation, unusedKeysManager } from '../api/key-notices.js';
import { systemClock, type Clock } from '../clock.js';
import type { Registry } from '../registry/registry.js';
import { ApiError } from '../api/errors.js';
import type { AuthContext } from './auth/guard.js';
import type { ActivityRecorder } from '../auth/activity.js';
import type { ServerMetrics } from './metrics.js';
import { PeriodicRunner } from '../background/periodic-runner.js';
import { Pace } from '../background/pace.js';
import { WarnedKeys } from './warned-keys.js';

/** The role whose last working key is never disabled (so unused-key disabling cannot lock everyone out). */
const adminRole = 'management-admin';

const day = 86_400_000;
/** Keys a sweep judges in one step (about 1 ms of work), before a pause (background/pace.ts). */
const sweepStep = 100;
/** The next sweep waits at least this many times the last one's own time (at most 5% of the event loop). */
const sweepBudget = 20;
const gaugeWindows: [string, number][] = [['1d', day], ['7d', 7 * day], ['30d', 30 * day]];

/**
 * When the key was last enabled again (spec.disabled true -> false, recorded by the server in the
 * re-enabled-at annotation: src/api/re-enable.ts): re-enabling gives the key a fresh window from
 * then, instead of being disabled again a minute later, before anyone could use it. Later writes
 * (a scheduled rotation, an edit) do not move it, and nobody but the server can set it.
 */
export function reEnabledAt(key: OwnedAccessKey): number | undefined {
  const at = key.spec.disabled ? undefined : key.metadata.annotations?.[reEnabledAtAnnotation];
  const ms = at === undefined ? NaN : Date.parse(at);
  return Number.isFinite(ms) ? ms : undefined;
}

export interface KeyHealthSweepOptions {
  /** Time between sweeps (default 60 s). */
  intervalMs?: number;
  /** The window a key entering it is warned of, once (default 14d). */
  warnExpiryMs?: number;
  /** Disable keys unused for longer than this (off when absent). */
  disableUnusedAfterMs?: number;
  now?: Clock;
}

export class KeyHealthSweep {
  /**
   * The keys warned of while in the window, with the last sweep that found each there: a key that
   * leaves it (deleted, expiry moved out) is forgotten after that sweep. Two small integers per key,
   * no string (warned-keys.ts): every key of a fleet of short-lived keys is in the window.
   */
  private readonly warned = new WarnedKeys();
  private sweeps = 0;
  readonly name = 'key-health';
  private readonly runner: PeriodicRunner;
  private readonly now: Clock;
  private readonly warnExpiryMs: number;
  private lastActiveMs = 0;

  constructor(
    private readonly registry: Registry,
    private readonly auth: AuthContext & { activity: ActivityRecorder },
    private readonly log: Logger,
    private readonly metrics: ServerMetrics,
    private readonly isLeader: () => boolean,
    private readonly opts: KeyHealthSweepOptions = {},
    /** Where the disabling writes go: the registry fenced by the leader's current hold (Leader.currentFence), so a stale leader's are refused. */
    private readonly writes: Registry = registry,
  ) {
    this.now = opts.now ?? systemClock;
    this.warnExpiryMs = opts.warnExpiryMs ?? defaultWarnExpiryMs;
    this.runner = new PeriodicRunner({
      intervalMs: () => this.nextIntervalMs,
      pass: () => this.run().catch((err: unknown) => this.log.warn({ err }, 'key health sweep failed; will retry at the next interval')),
      onError: () => {}, // the pass logs its own failure
    });
  }

  /** A sweep now, then every interval. */
  start(): void {
    this.runner.start(0);
  }

  stop(): Promise<void> {
    return this.runner.stop();
  }

  /**
   * The time to the next sweep: the interval, or 20 times the last sweep's own time when that is
   * longer, so that the sweep takes at most 5% of the event loop however many keys are in its window
   * (a million one-day keys take about 11 s to judge: a sweep every 4 minutes rather than every one).
   */
  get nextIntervalMs(): number {
    return Math.max(this.opts.intervalMs ?? 60_000, sweepBudget * this.lastActiveMs);
  }

  /** The last sweep's own time, ms: its steps between turns of the event loop, not the turns. */
  get lastSweepMs(): number {
    return this.lastActiveMs;
  }

  /** Whether this replica logs and disables (it holds the background-work lease). */
  get leading(): boolean {
    return this.isLeader();
  }

  /** How many keys are remembered as warned of (bounded by the keys in the window). */
  get warnedCount(): number {
    return this.warned.size;
  }

  /** One sweep from now: never two at once (one asked for while another runs follows it). */
  async sweep(): Promise<void> {
    await this.runner.run();
  }

  private async run(): Promise<void> {
    const now = this.now();
    const leader = this.isLeader();
    const disabling = leader && this.opts.disableUnusedAfterMs !== undefined;
    const counts = new Map<string, number>();
    const sweep = ++this.sweeps;
    const unused: { key: OwnedAccessKey; health: KeyHealth }[] = [];
    const pace = new Pace(sweepStep);
    // One key at a time: a fleet whose keys all expire within the window (short-lived CI keys) is
    // read whole, but never held whole, and the sweep pauses every hundred keys (about 1 ms of
    // decoding: a request's turn of the event loop waits at most that long, not the whole sweep).
    for await (const key of this.candidates(now, disabling, pace)) {
      const health = keyHealth(key, now, this.auth.activity.lastUsed(key.metadata.name!));
      this.count(counts, key, health);
      if (leader) this.warnOfExpiry(key, health, sweep);
      if (disabling && this.isUnused(key, health, now)) unused.push({ key, health });
      if (pace.counted()) {
        await pace.pause();
        // A stop (the server closing) does not wait for the rest of a long sweep: its counts are
        // partial, so neither gauges nor warned keys nor disables come of it.
        if (this.runner.stopping) return;
      }
    }
    // Stopped at a pause among the candidates: as partial as a stop in the loop above.
    if (this.runner.stopping) return;
    this.lastActiveMs = pace.activeMs;
    this.setGauges(counts);
    // Keys that left the window (or are gone) are forgotten; a replica that does not lead forgets all.
    if (leader) {
      this.warned.forgetUnseen(sweep);
    } else this.warned.clear();
    if (disabling) await this.disableUnused(unused, now);
    this.metrics.keyHealthSweep.set(now.getTime() / 1000);
  }

  /** The keys this sweep may act on (see the file's comment), each once: by expiry, then by last use. */
  private async *candidates(now: Date, disabling: boolean, pace: Pace): AsyncGenerator<OwnedAccessKey> {
    const keys = this.registry.ownedaccesskeys;
    const widest = Math.max(gaugeWindows.at(-1)![1], this.warnExpiryMs);
    const expiring = new Set<string>();
    for await (const k of keys.eachDue('expiry', now.getTime() + widest)) {
      if (disabling) expiring.add(k.metadata.name!);
      yield k as OwnedAccessKey;
    }
    if (!disabling) return;
    for await (const k of keys.eachDue('lastUse', now.getTime() - this.opts.disableUnusedAfterMs!)) {
      if (!expiring.has(k.metadata.name!)) yield k as OwnedAccessKey;
      else if (pace.counted()) {
        // Read again, and decoded again: it counts toward the step too.
        await pace.pause();
        if (this.runner.stopping) return;
      }
    }
  }

  /** Adds the key to the gauges' counts (expired, or expiring within each window; by Login or not). */
  private count(counts: Map<string, number>, key: OwnedAccessKey, h: KeyHealth): void {
    if (key.metadata.deletionTimestamp) return;
    const add = (k: string) => void counts.set(k, (counts.get(k) ?? 0) + 1);
    const login = String(h.login);
    if (h.expired) return add(`expired/${login}`);
    if (h.disabled) return;
    for (const [within, ms] of gaugeWindows) if (expiresWithin(h, ms)) add(`${within}/${login}`);
  }

  private setGauges(counts: Map<string, number>): void {
    for (const login of ['true', 'false']) {
      this.metrics.keysExpired.set({ login }, counts.get(`expired/${login}`) ?? 0);
      for (const [within] of gaugeWindows) this.metrics.keysExpiring.set({ within, login }, counts.get(`${within}/${login}`) ?? 0);
    }
  }

  /** Logs the key once as it enters the window; notes this sweep found it there. */
  private warnOfExpiry(key: OwnedAccessKey, h: KeyHealth, sweep: number): void {
    if (h.disabled || key.metadata.deletionTimestamp || h.expiresAt === undefined) return;
    if (!h.expired && !expiresWithin(h, this.warnExpiryMs)) return;
    // A key written past the API without a uid is remembered by its name (no uid has the form).
    const uid = key.metadata.uid;
    const known = this.warned.note(typeof uid === 'string' && uid !== '' ? uid : `name:${String(key.metadata.name)}`, sweep);
    // An expired key stays remembered (it is refused, and maintenance removes it), never warned of late.
    if (known || h.expired) return;
    this.log.warn(
      { keyName: h.name, owner: h.owner, ...(h.type ? { type: h.type } : {}), expiresAt: isoSeconds(h.expiresAt), warnExpiry: formatSpan(this.warnExpiryMs) },
      `access key "${h.name}" of ${h.owner} expires at ${isoSeconds(h.expiresAt)}, in ${formatSpan(h.expiresInMs!)}: rotate it or extend its ttl before it is refused`,
    );
  }

  /** Whether the key works now and makes its holder a management admin (a key whose scope narrows does not count; `scope: {}` narrows nothing). */
  private isWorkingAdmin(key: OwnedAccessKey, now: Date): boolean {
    if (scopeNarrows(key.spec.scope) || keyRefusal(key, now, this.auth.activity.lastUsed(key.metadata.name!), this.auth.teams)) return false;
    return this.auth.authenticator.identityOf(key).clusterRoles.has(adminRole);
  }

  /** Whether to disable the key as unused (not re-enabled lately, working, unused for longer than the option). */
  private isUnused(key: OwnedAccessKey, h: KeyHealth, now: Date): boolean {
    const after = this.opts.disableUnusedAfterMs!;
    const again = reEnabledAt(key);
    if (again !== undefined && now.getTime() - again <= after) return false;
    return !h.disabled && !h.expired && !key.metadata.deletionTimestamp && unusedFor(h, after);
  }

  private async disableUnused(unused: { key: OwnedAccessKey; health: KeyHealth }[], now: Date): Promise<void> {
    const after = this.opts.disableUnusedAfterMs!;
    if (unused.length === 0) return;
    // Never the working management-admin key that lasts longest: the one that never expires (or
    // expires last; the most recently used among equals) stays enabled, named in a warning, so an
    // administrator can always get in. Sparing the last used one regardless of expiry could keep
    // a key that expires tomorrow and disable the one that never does. The spare is the longest
    // of all keys: they are read (one at a time) only when a key about to be disabled is a working
    // admin key (rare); otherwise no spare can be among those disabled.
    let disabled = unused;
    if (unused.some((u) => this.isWorkingAdmin(u.key, now))) {
      const lasts = (h: KeyHealth) => h.expiresAt ?? Infinity;
      let longest: KeyHealth | undefined;
      for await (const o of this.registry.ownedaccesskeys.scan()) {
        const key = o as OwnedAccessKey;
        if (!this.isWorkingAdmin(key, now)) continue;
        const h = keyHealth(key, now, this.auth.activity.lastUsed(key.metadata.name!));
        if (longest === undefined || lasts(h) > lasts(longest) || (lasts(h) === lasts(longest) && h.lastUse > longest.lastUse)) longest = h;
      }
      const spared = longest && unused.find((u) => u.health.name === longest.name);
      if (spared) {
        disabled = unused.filter((u) => u !== spared);
        const h = spared.health;
        this.log.warn({ keyName: h.name, owner: h.owner, lastUse: isoSeconds(h.lastUse) }, `access key "${h.name}" is unused for longer than --disable-unused-after but is the last working ${adminRole} key: left enabled`);
      }
    }
    for (const { key, health } of disabled) await this.disable(key, health, after);
  }

  private async disable(key: OwnedAccessKey, h: KeyHealth, after: number): Promise<void> {
    const name = h.name;
    // A use this replica saw since the read (its status write may not be stored yet) saves the key.
    const lastUse = this.auth.activity.lastUsed(name);
    if (lastUse !== undefined && lastUse > h.lastUse) return;
    const since = h.undated ? 'never used, and without a creation time' : `${h.neverUsed ? 'never used since its creation at' : 'unused since'} ${isoSeconds(h.lastUse)}`;
    const reason = `${since} (no use for ${formatSpan(after)}; --disable-unused-after)`;
    try {
      // The resourceVersion read is a precondition: a use recorded meanwhile (status.lastActivity,
      // written through any replica), or any other change, makes this a conflict, and the next sweep decides again.
      await this.writes.ownedaccesskeys.patch(
        name,
        'merge',
        { metadata: { resourceVersion: key.metadata.resourceVersion, annotations: { [disabledReasonAnnotation]: reason } }, spec: { disabled: true } },
        { fieldManager: unusedKeysManager, auditAnnotations: { [disabledReasonAnnotation]: reason }, serverWrite: true },
      );
      this.metrics.keysAutoDisabled.inc();
      this.log.warn({ keyName: name, owner: h.owner, ...(h.type ? { type: h.type } : {}), lastUse: isoSeconds(h.lastUse), neverUsed: h.neverUsed }, `disabled access key "${name}" of ${h.owner}: ${reason}`);
    } catch (err) {
      // Changed (a use recorded, an edit) or deleted since the read: the next sweep decides again.
      if (err instanceof ApiError && (err.code === 404 || err.code === 409)) return;
      this.log.warn({ err, keyName: name }, 'could not disable an unused access key; will retry at the next sweep');
    }
  }
}
