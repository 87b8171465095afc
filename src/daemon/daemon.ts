/**
 * The sync daemon: reconciles on an interval (with jitter), when asked (webhook), when the source
 * folder changes (chokidar) and when the API shows a change to what git describes of a managed
 * object. One run at a time; triggers during a run coalesce into one more. A git source is fetched
 * into its mirror every cycle, but read and parsed only when its revision moved; a cycle that finds
 * neither a new revision (or changed files) nor a changed managed object plans nothing and writes
 * nothing. Failures back off exponentially; a broken source writes nothing, so the last good state stays.
 */
import { systemClock, type Clock } from '../clock.js';
import type { KeyDelivery } from '../gitops/keys/github-secrets.js';
import { readdir } from 'node:fs/promises';
import { watchOptions } from './source-watch.js';
import { join, resolve } from 'node:path';
import chokidar, { type FSWatcher } from 'chokidar';
import type { Logger } from 'pino';
import type { ApiClient } from '../client/types.js';
import { reconcile } from '../gitops/reconcile.js';
import { mkdirNoFollow, removeNoFollow, writeNoFollow } from '../gitops/no-follow.js';
import { isFailedOutcome, type Report } from '../gitops/report/report.js';
import { reportJson, writeReports } from '../gitops/report/write.js';
import { isGitSource, openSource, type LoadedSource, type SourceOptions } from '../gitops/source/load.js';
import { ApiFollower } from './api-follower.js';
import { cycleLog } from './cycle-log.js';
import type { DaemonMetrics } from './metrics.js';
import { PeriodicRunner } from '../background/periodic-runner.js';

export interface DaemonOptions {
  source: SourceOptions;
  client: ApiClient;
  intervalMs: number;
  selfHeal: boolean;
  prune: boolean;
  allowEmpty: boolean;
  maxPrune: number;
  concurrency: number;
  keyDir?: string;
  /** Where keys of OwnedAccessKeys annotated with key-secret go (GITHUB_TOKEN's GitHub). */
  keyDelivery?: KeyDelivery;
  /** The time scheduled rotations are judged by (tests step it; default the system's). */
  now?: Clock;
  reportDir?: string;
  /** Policy objects every cycle checks (read again each cycle, so an edited policy applies). */
  policyDir?: string;
  /** The report's key health section: keys expiring within / unused for longer than these (defaults: reconcile-defaults.ts). */
  warnExpiryMs?: number;
  warnUnusedMs?: number;
  /** Reports of earlier cycles kept in reportDir/history. */
  historySize?: number;
  metrics: DaemonMetrics;
  log: Logger;
  /** Called after every cycle that ran (the CLI prints the first report). */
  onCycle?: (report: Report | undefined, error: string | undefined) => void;
}

const maxBackoffMs = 5 * 60_000;
/** Changes (files, API events) within this long of the first are reconciled together. */
const gatherMs = 300;

/**
 * The daemon's state; start and stop move it. Invariants:
 * - Idle: never started (a cycle asked for, as a CLI's one-off trigger, still runs).
 * - Running: started; `abort` is the signal the cycles write under, `fsWatcher` follows a folder
 *   source. Cycles run on the runner: at start, on every interval (or backoff), and when triggered.
 * - Stopped: the signal aborted, the watchers closed, no cycle in flight (stop waited for it).
 *   Start makes it Running again (a replica may lose the lease and win it back).
 */
type DaemonState = { name: 'Idle' } | { name: 'Running'; abort: AbortController; fsWatcher: FSWatcher | undefined } | { name: 'Stopped' };

export class SyncDaemon {
  lastReport: Report | undefined;
  lastGoodReport: Report | undefined;
  lastError: string | undefined;
  cycles = 0;
  private state: DaemonState = { name: 'Idle' };
  /** The cycles: one at a time; triggers during one coalesce into one more. */
  private readonly runner: PeriodicRunner;
  /** Failed cycles in a row: the backoff. */
  private failures = 0;
  private readonly follower: ApiFollower;
  /** The source as last read: reused while its revision (or, for a folder, its files) stays the same. */
  private loaded: LoadedSource | undefined;
  /** When the earliest scheduled rotation falls due, as the last cycle saw the keys. */
  private nextRotationAt: Date | undefined;
  private filesChanged = true;
  private apiChanged = true;

  constructor(private readonly opts: DaemonOptions) {
    this.follower = new ApiFollower({
      client: opts.client,
      log: opts.log,
      isManaged: (id) => !this.loaded || id === this.loaded.id || this.loaded.formerIds.includes(id),
      onChange: (reason) => {
        this.apiChanged = true;
        this.soon(reason);
      },
    });
    this.runner = new PeriodicRunner({
      intervalMs: () => this.nextDelay(),
      pass: () => this.cycle(),
      onError: (err) => opts.log.warn({ err }, 'reconcile cycle failed'),
    });
  }

  /** A cycle is in flight. */
  get cycling(): boolean {
    return this.runner.state === 'Running' || this.runner.state === 'Stopping';
  }

  get ready(): boolean {
    return this.lastGoodReport !== undefined;
  }

  /** Starts (or, after stop, restarts: a replica may lose the lease and win it back). */
  start(): void {
    if (this.state.name === 'Running') return;
    const running: DaemonState = { name: 'Running', abort: new AbortController(), fsWatcher: undefined };
    this.state = running;
    this.filesChanged = true;
    this.apiChanged = true;
    this.opts.log.debug({ reason: 'start' }, 'reconcile triggered');
    this.runner.start(0);
    const { source } = this.opts;
    if (!isGitSource(source)) {
      const folder = resolve(source.source, source.path ?? '.');
      running.fsWatcher = chokidar.watch(folder, watchOptions(folder));
      running.fsWatcher.on('all', () => {
        this.filesChanged = true;
        this.soon('source files changed');
      });
    }
    this.follower.start();
  }

  /** Runs a cycle now, or right after the one in progress. */
  trigger(reason: string): void {
    this.opts.log.debug({ reason }, 'reconcile triggered');
    void this.runner.run();
  }

  /** Stops: no new cycle, no new write; the write in flight completes. */
  async stop(): Promise<void> {
    const was = this.state;
    this.state = { name: 'Stopped' };
    if (was.name === 'Running') was.abort.abort();
    this.follower.stop();
    await (was.name === 'Running' ? was.fsWatcher?.close() : undefined);
    await this.runner.stop();
  }

  private soon(reason: string): void {
    this.opts.log.debug({ reason }, 'reconcile asked for');
    this.runner.soon(gatherMs);
  }

  /** The wait after a cycle: the backoff after failures, else the interval with jitter. */
  private nextDelay(): number {
    if (this.failures > 0) return Math.min(maxBackoffMs, 1000 * 2 ** (this.failures - 1));
    return this.opts.intervalMs * (0.9 + Math.random() * 0.2);
  }

  /** The source to plan from: read anew only when it changed since it was last read. */
  private async source(): Promise<{ loaded: LoadedSource; sourceChanged: boolean }> {
    const opened = await openSource(this.opts.source);
    try {
      const cached = this.loaded;
      const sourceChanged = !cached || (opened.gitRevision !== undefined ? cached.revision !== opened.gitRevision : this.filesChanged);
      this.filesChanged = false;
      return { loaded: sourceChanged || !cached ? await opened.read() : cached, sourceChanged };
    } finally {
      await opened.close();
    }
  }

  private async cycle(): Promise<void> {
    const started = performance.now();
    const o = this.opts;
    // Changes seen from here on are for the next cycle.
    const apiChanged = this.apiChanged;
    this.apiChanged = false;
    try {
      const { loaded, sourceChanged } = await this.source();
      this.loaded = loaded;
      // A key's value ages with nothing changing: a due rotation is a reason to plan.
      const rotationDue = this.nextRotationAt !== undefined && (o.now ?? systemClock)().getTime() >= this.nextRotationAt.getTime();
      if (!sourceChanged && !apiChanged && !rotationDue && this.failures === 0 && this.lastReport) {
        o.metrics.unchanged.inc();
        o.log.debug({ revision: loaded.revision }, 'source and managed objects unchanged since the last cycle: nothing to plan');
        return;
      }
      const { report, nextRotationAt } = await reconcile({
        mode: 'apply',
        client: o.client,
        source: o.source,
        loaded,
        prune: o.prune,
        allowEmpty: o.allowEmpty,
        maxPrune: o.maxPrune,
        concurrency: o.concurrency,
        reportDriftOnly: !o.selfHeal,
        signal: this.signal(),
        ...(o.keyDir ? { keyDir: o.keyDir } : {}),
        ...(o.policyDir ? { policyDir: o.policyDir } : {}),
        ...(o.keyDelivery ? { keyDelivery: o.keyDelivery } : {}),
        ...(o.warnExpiryMs ? { warnExpiryMs: o.warnExpiryMs } : {}),
        ...(o.warnUnusedMs ? { warnUnusedMs: o.warnUnusedMs } : {}),
        ...(o.now ? { now: o.now } : {}),
      });
      this.cycles++;
      this.lastReport = report;
      this.nextRotationAt = nextRotationAt;
      const ok = !isFailedOutcome(report.outcome);
      o.metrics.cycle(report.outcome, (performance.now() - started) / 1000, report);
      if (ok) {
        this.lastGoodReport = report;
        this.lastError = undefined;
        this.failures = 0;
      } else {
        this.lastError = report.refused ?? (report.errors[0] ? `${report.errors.length} error(s) in the source, first: ${report.errors[0].file}:${report.errors[0].line}:${report.errors[0].column}: ${report.errors[0].message}` : `${report.summary.failed} write(s) failed`);
        this.failures++;
      }
      await this.writeReport(report);
      const line = cycleLog(report);
      o.log[line.level](line.fields, line.msg);
      o.onCycle?.(report, this.lastError);
    } catch (err) {
      this.cycles++;
      this.failures++;
      this.apiChanged ||= apiChanged;
      this.lastError = err instanceof Error ? err.message : String(err);
      o.metrics.cycle('error', (performance.now() - started) / 1000);
      o.log.warn({ error: this.lastError }, 'reconcile failed; the last good state stays applied');
      o.onCycle?.(undefined, this.lastError);
    }
  }

  /** The signal a cycle writes under: aborted by stop (a cycle before any start runs unaborted). */
  private signal(): AbortSignal {
    return this.state.name === 'Running' ? this.state.abort.signal : this.state.name === 'Stopped' ? AbortSignal.abort() : new AbortController().signal;
  }

  private async writeReport(report: Report): Promise<void> {
    const dir = this.opts.reportDir;
    if (!dir) return;
    await writeReports(report, dir);
    await mkdirNoFollow(join(dir, 'history'), 'the report history folder');
    await writeNoFollow(join(dir, 'history', `${report.generatedAt.replace(/[:]/g, '')}-${String(this.cycles).padStart(6, '0')}-${report.outcome}.json`), reportJson(report));
    const history = (await readdir(join(dir, 'history'))).sort();
    for (const old of history.slice(0, Math.max(0, history.length - (this.opts.historySize ?? 10)))) await removeNoFollow(join(dir, 'history', old));
  }
}
