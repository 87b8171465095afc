/**
 * The notifier: background work of the replica holding the lease (leader.ts), so one replica
 * notices, stores and sends, fenced. It follows the access keys through a store watch, so a key
 * disabled (reported leaked, or unused) on any replica is sent at once, and sweeps once a minute
 * (and on taking the lease) the keys that can have something to say, found by index, for the
 * warnings of the daily digest, the retries that are due, and what a new leader must catch up on. Events come from the store's state (events.ts), so
 * nothing else calls the notifier; the outbox (outbox.ts) stores each message once, and what is
 * stored is sent until delivered or given up.
 *
 * One pass at a time: a pass asked for while one runs follows it.
 */
import type { Logger } from 'pino';
import type { OwnedAccessKey } from '../api/types.js';
import { defaultWarnExpiryMs, keyHealth } from '../auth/key-health.js';
import { systemClock, type Clock } from '../clock.js';
import type { Registry } from '../registry/registry.js';
import { mayNotifyValue } from '../registry/indexes.js';
import type { StoreWatch } from '../store/types.js';
import type { NotificationConfig, Receiver } from './config.js';
import { immediateEvents, warningEvents, type KeyEvent } from './events.js';
import { messageItem } from './messages.js';
import type { NotificationMetrics } from './metrics.js';
import { digestRecordName, eventRecordName, Outbox, type OutboxRecord } from './outbox.js';
import { receiversOf } from './routing.js';
import { Dispatcher } from './dispatch.js';
import { PeriodicRunner } from '../background/periodic-runner.js';
import { Pace } from '../background/pace.js';

export interface NotifierOptions {
  config: NotificationConfig;
  now?: Clock;
  /** Time between sweeps (default 60 s). */
  intervalMs?: number;
  /** The warning window of expiring and to-be-disabled keys (serve --warn-expiry). */
  warnExpiryMs?: number;
  /** serve --disable-unused-after: keys to be disabled within the window are warned of. */
  disableUnusedAfterMs?: number;
  /** How long a rotation may await confirmation, or a delivery stay pending, before it counts as failed. */
  failureGraceMs?: number;
  /** A message still failing this long after it was stored is given up (default 3 days). */
  maxAgeMs?: number;
  /** Failed attempts in a row after which a receiver is reported failing (default 5). */
  failingAfter?: number;
}

const isoDay = (d: Date) => d.toISOString().slice(0, 10);
/** Keys a sweep reads in one step before a pause (background/pace.ts). */
const sweepStep = 100;
const byKeyName = (events: KeyEvent[]) => events.sort((a, b) => (a.key.name < b.key.name ? -1 : a.key.name > b.key.name ? 1 : 0));
const dayMs = 86_400_000;

export class Notifier {
  private readonly outbox: Outbox;
  private readonly now: Clock;
  private readonly receivers: Map<string, Receiver>;
  private readonly dispatcher: Dispatcher;
  private watch: StoreWatch | undefined;
  /** The passes: one at a time, a sweep every interval, changed keys as they come. */
  private readonly runner: PeriodicRunner;
  /** Bumped by every start: a watch loop of an earlier hold (lost, then taken again) ends instead of running twice. */
  private generation = 0;
  /** Keys changed since the last pass that have something to say now, by store key (the latest version). */
  private readonly changed = new Map<string, OwnedAccessKey>();
  private readonly warnExpiryMs: number;
  private sweepWanted = false;

  constructor(
    private readonly registry: Registry,
    private readonly lastUsed: (name: string) => number | undefined,
    private readonly log: Logger,
    private readonly metrics: NotificationMetrics,
    private readonly opts: NotifierOptions,
  ) {
    this.outbox = new Outbox(registry.store);
    this.now = opts.now ?? systemClock;
    this.warnExpiryMs = opts.warnExpiryMs ?? defaultWarnExpiryMs;
    this.receivers = new Map(opts.config.receivers.map((r) => [r.name, r]));
    this.dispatcher = new Dispatcher(this.outbox, this.receivers, metrics, log, opts);
    this.runner = new PeriodicRunner({
      intervalMs: opts.intervalMs ?? 60_000,
      pass: (cause) => {
        if (cause === 'timer') this.sweepWanted = true;
        return this.pass().catch((err: unknown) => this.log.warn({ err }, 'notification pass failed; will retry at the next sweep'));
      },
      onError: () => {}, // the pass logs its own failure
    });
  }

  /** Started by the leader (its writes go through the fenced registry it was made with): a sweep now, then every interval, and the key watch. */
  start(): void {
    const generation = ++this.generation;
    this.runner.start(0);
    void this.follow(generation);
  }

  async stop(): Promise<void> {
    this.watch?.stop();
    await this.runner.stop();
  }

  /** Running: started by the leader and not stopped since. */
  get active(): boolean {
    return this.runner.started;
  }

  /** One whole pass (every key, the digest, the retries due); tests call it after moving their clock. Nothing while not leading. */
  run(): Promise<void> {
    if (!this.active) return Promise.resolve();
    this.sweepWanted = true;
    return this.kick();
  }

  /** One pass at a time; what is asked for meanwhile (a sweep, changed keys) is done by the one that follows. */
  private async kick(): Promise<void> {
    await this.runner.run();
  }

  /** A sweep when one is wanted (it reads every key that can have an event, the changed ones too), else the changed keys alone. */
  private async pass(): Promise<void> {
    const keys = [...this.changed.values()];
    this.changed.clear();
    if (this.sweepWanted) {
      this.sweepWanted = false;
      return this.sweep();
    }
    if (keys.length) await this.keysChanged(keys);
  }

  /** Follows the keys: each change is looked at at once (a leak is sent without waiting for the sweep). */
  private async follow(generation: number): Promise<void> {
    const store = this.registry.store;
    const current = () => this.active && generation === this.generation;
    while (current()) {
      try {
        const w = (this.watch = store.watch<OwnedAccessKey>('/ownedaccesskeys/', await store.currentRevision()));
        await w.started;
        for await (const ev of w) {
          if (ev.type === 'DELETED' || immediateEvents(ev.object, this.now(), this.opts).length === 0) continue;
          this.changed.set(ev.key, ev.object);
          void this.kick();
        }
      } catch (err) {
        if (current()) this.log.warn({ err }, 'notifications: the key watch ended; following again');
      }
      // Whatever changed while the watch was down is found by the next sweep.
      if (current()) await new Promise((r) => setTimeout(r, 1000).unref());
    }
  }

  private async keysChanged(keys: OwnedAccessKey[]): Promise<void> {
    const now = this.now();
    const events = keys.flatMap((k) => immediateEvents(k, now, this.opts));
    const known = new Set((await this.outbox.all()).map((r) => `${r.receiver}/${r.metadata.name}`));
    await this.enqueue(events, known, now);
    await this.dispatcher.deliverDue(now, () => !this.active);
  }

  private async sweep(): Promise<void> {
    const now = this.now();
    const found = await this.events(now);
    if (!found) return;
    const { immediate, warnings } = found;
    const records = await this.outbox.all();
    const known = new Set(records.map((r) => `${r.receiver}/${r.metadata.name}`));
    const sources = await this.enqueue(immediate, known, now);
    await this.digest(warnings, records, now);
    await this.collect(records, sources, now, this.warnExpiryMs);
    await this.dispatcher.deliverDue(now, () => !this.active);
  }

  /**
   * What a sweep at `now` finds: each key's events to send at once and its warnings for the
   * digest, in key order, as a walk over every key would find them. Undefined when stopped meanwhile.
   */
  async events(now: Date): Promise<{ immediate: KeyEvent[]; warnings: KeyEvent[] } | undefined> {
    const options = { ...this.opts, warnExpiryMs: this.warnExpiryMs };
    const immediate: KeyEvent[] = [];
    const warnings: KeyEvent[] = [];
    const pace = new Pace(sweepStep);
    for await (const key of this.candidates(now, options, pace)) {
      immediate.push(...immediateEvents(key, now, this.opts));
      warnings.push(...warningEvents(key, keyHealth(key, now, this.lastUsed(key.metadata.name!)), now, options));
      if (pace.counted()) {
        await pace.pause();
        // A stop (the lease lost, the server closing) does not wait for the rest of a long sweep.
        if (this.runner.stopping) return undefined;
      }
    }
    if (this.runner.stopping) return undefined;
    // The candidates come by index, not in key order: put the events back in it.
    return { immediate: byKeyName(immediate), warnings: byKeyName(warnings) };
  }

  /**
   * The keys that can have an event now, each once, read through the watch cache's indexes rather
   * than by a walk over every key: those that may notify at once (api/key-notices.ts), those whose
   * stored expiry falls within the warning window, and, with the unused-key rule, those whose stored
   * last use would disable them within it. A use known only in memory moves a key's expiry and its
   * disabling later, never earlier, so every key with a warning is among these
   * (test/notify/sweep-candidates.test.ts holds the sweep to the walk it replaces).
   */
  private async *candidates(now: Date, opts: { warnExpiryMs: number; disableUnusedAfterMs?: number }, pace: Pace): AsyncGenerator<OwnedAccessKey> {
    const keys = this.registry.ownedaccesskeys;
    const at = now.getTime() + opts.warnExpiryMs;
    const after = opts.disableUnusedAfterMs;
    const sources = [keys.eachByField('notice', mayNotifyValue), keys.eachDue('expiry', at), ...(after !== undefined ? [keys.eachDue('lastUse', at - after)] : [])];
    const seen = new Set<string>();
    for (const source of sources) {
      for await (const k of source) {
        const name = k.metadata.name!;
        if (!seen.has(name)) {
          seen.add(name);
          yield k as OwnedAccessKey;
        } else if (pace.counted()) {
          // Met again, and decoded again: it counts toward the step too.
          await pace.pause();
          if (this.runner.stopping) return;
        }
      }
    }
  }

  private record(receiver: string, name: string, now: Date, message: OutboxRecord['message'], extra: Partial<OutboxRecord> = {}): OutboxRecord {
    return { metadata: { name }, receiver, createdAt: now.toISOString(), message, attempts: 0, nextAttemptAt: now.toISOString(), ...extra };
  }

  /** Stores each event for each of its receivers, once; returns the sources of every event seen. */
  private async enqueue(events: KeyEvent[], known: Set<string>, now: Date): Promise<Set<string>> {
    const sources = new Set<string>();
    for (const e of events) {
      for (const receiver of receiversOf(this.opts.config, e)) {
        const source = `${receiver}|${e.event}|${e.key.uid}|${e.occurrence}`;
        sources.add(source);
        const name = eventRecordName(source);
        if (known.has(`${receiver}/${name}`)) continue;
        if (await this.outbox.add(this.record(receiver, name, now, { kind: 'event', item: messageItem(e) }, { source }))) {
          known.add(`${receiver}/${name}`);
          this.log.info({ receiver, event: e.event, keyName: e.key.name }, `notification queued: ${e.event} of access key "${e.key.name}" for ${receiver}`);
        }
      }
    }
    return sources;
  }

  /** Today's digest of each receiver: the warnings no earlier digest carried, once a day. */
  private async digest(warnings: KeyEvent[], records: OutboxRecord[], now: Date): Promise<void> {
    const day = isoDay(now);
    const byReceiver = new Map<string, KeyEvent[]>();
    for (const e of warnings) for (const r of receiversOf(this.opts.config, e)) byReceiver.set(r, [...(byReceiver.get(r) ?? []), e]);
    for (const [receiver, items] of byReceiver) {
      const digests = records.filter((r) => r.receiver === receiver && r.message.kind === 'digest');
      if (digests.some((r) => r.metadata.name === digestRecordName(day))) continue;
      const covered = new Set(digests.flatMap((r) => r.covers ?? []));
      const fresh = items.filter((e) => !covered.has(`${e.event}|${e.key.uid}|${e.occurrence}`));
      if (fresh.length === 0) continue;
      const message = { kind: 'digest' as const, day, items: fresh.map(messageItem) };
      const covers = fresh.map((e) => `${e.event}|${e.key.uid}|${e.occurrence}`);
      if (await this.outbox.add(this.record(receiver, digestRecordName(day), now, message, { covers }))) {
        this.log.info({ receiver, day, warnings: fresh.length }, `notification digest of ${day} queued for ${receiver}: ${fresh.length} warning(s)`);
      }
    }
  }

  /**
   * Removes what is done with: a sent (or given up) event whose cause is gone (the key enabled
   * again, deleted), a digest older than the warning window (its warnings have passed), and
   * anything for a receiver no longer declared.
   */
  private async collect(records: OutboxRecord[], sources: Set<string>, now: Date, windowMs: number): Promise<void> {
    for (const r of records) {
      const done = r.deliveredAt !== undefined || r.gaveUpAt !== undefined;
      const stale =
        !this.receivers.has(r.receiver) ||
        (r.message.kind === 'event' && done && !sources.has(r.source ?? '')) ||
        (r.message.kind === 'digest' && done && now.getTime() - Date.parse(r.createdAt) > windowMs + dayMs);
      if (stale) await this.outbox.remove(r);
    }
  }
}
