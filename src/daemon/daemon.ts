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

export class SyncDaemon {
  lastReport: Report | undefined;
  lastGoodReport: Report | undefined;
  lastError: string | undefined;
  cycles = 0;
  private timer: NodeJS.Timeout | undefined;
  private debounce: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private failures = 0;
  private stopped = false;
  private abort = new AbortController();
  private fsWatcher: FSWatcher | undefined;
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
  }

  get ready(): boolean {
    return this.lastGoodReport !== undefined;
  }

  /** Starts (or, after stop, restarts: a replica may lose the lease and win it back). */
  start(): void {
    this.stopped = false;
    this.abort = new AbortController();
    this.filesChanged = true;
    this.apiChanged = true;
    this.trigger('start');
    const { source } = this.opts;
    if (!isGitSource(source)) {
      const folder = resolve(source.source, source.path ?? '.');
      this.fsWatcher = chokidar.watch(folder, watchOptions(folder));
      this.fsWatcher.on('all', () => {
        this.filesChanged = true;
        this.soon('source files changed');
      });
    }
    this.follower.start();
  }

  /** Runs a cycle now, or right after the one in progress. */
  trigger(reason: string): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    clearTimeout(this.timer);
    this.opts.log.debug({ reason }, 'reconcile triggered');
    this.running = this.cycle().finally(() => {
      this.running = undefined;
      if (this.again && !this.stopped) {
        this.again = false;
        this.trigger('triggered during the last cycle');
      }
    });
  }

  /** Stops: no new cycle, no new write; the write in flight completes. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    clearTimeout(this.timer);
    clearTimeout(this.debounce);
    this.follower.stop();
    await this.fsWatcher?.close();
    await this.running;
  }

  private soon(reason: string): void {
    clearTimeout(this.debounce);
    this.debounce = setTimeout(() => this.trigger(reason), 300);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.trigger('interval'), ms);
    this.timer.unref();
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
        this.schedule(o.intervalMs * (0.9 + Math.random() * 0.2));
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
        signal: this.abort.signal,
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
    if (this.failures > 0) this.schedule(Math.min(maxBackoffMs, 1000 * 2 ** (this.failures - 1)));
    else this.schedule(o.intervalMs * (0.9 + Math.random() * 0.2));
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
