/**
 * Records when each key was last used: remembered at once in memory (for ttlAfterLastActivity on
 * this server), written to status.lastActivity at most once per interval per key, off the request path.
 * During a rotation it also records which value was used (status.rotation.lastUsedValue) and when
 * the previous value was last used (previousLastActivity): by the hashes of the values, remembered
 * here until the next write, so a use of the previous value within the interval is not lost.
 * Memory holds only keys that exist: every deletion (through any replica) is followed and forgotten.
 */
import type { Logger } from 'pino';
import type { KubeObject } from '../api/types.js';
import type { ResourceRegistry } from '../registry/resource-registry.js';
import type { StoreWatch } from '../store/types.js';

/** How often a key's status.lastActivity may be written: once a minute (DECISIONS.md). */
export const defaultActivityIntervalMs = 60_000;

const isNotFound = (err: unknown) => (err as { reason?: string }).reason === 'NotFound';

/**
 * How the recorder follows key deletions; `start`, `stop` and `follow` move it. Invariants:
 * - Stopped: not following (before start, after stop); memory may keep a key deleted meanwhile.
 * - Starting: reading the store's revision, then checking every remembered key by GET (deletions
 *   made while not following); no watch yet.
 * - Following: `watch` runs from the revision read when Starting, so no deletion falls between.
 * - Backoff: the last attempt failed; Starting again after 1 s, doubling to 30 s.
 */
type FollowState = { name: 'Stopped' } | { name: 'Starting' } | { name: 'Following'; watch: StoreWatch<KubeObject> } | { name: 'Backoff' };

export class ActivityRecorder {
  private readonly lastUse = new Map<string, number>();
  private readonly lastWrite = new Map<string, number>();
  /** Each key's latest use by its previous value (during a rotation's overlap). */
  private readonly previousUse = new Map<string, { at: Date; hash: string }>();
  private state: FollowState = { name: 'Stopped' };

  constructor(
    private readonly keys: ResourceRegistry,
    private readonly intervalMs: number,
    private readonly log: Logger,
  ) {}

  /** Starts following key deletions. */
  start(): void {
    if (this.state.name !== 'Stopped') return;
    this.state = { name: 'Starting' };
    void this.follow();
  }

  stop(): void {
    const was = this.state;
    this.state = { name: 'Stopped' };
    if (was.name === 'Following') was.watch.stop();
  }

  /** How many keys are remembered (a deleted key is not). */
  get size(): number {
    return this.lastUse.size;
  }

  /** A use of the key `name` at `now`, by the value whose hash is `hash`; `previous`: that was its previous value. */
  touch(name: string, now: Date, hash = '', previous = false): void {
    const ms = now.getTime();
    this.lastUse.set(name, ms);
    if (previous) this.previousUse.set(name, { at: now, hash });
    if (ms - (this.lastWrite.get(name) ?? 0) < this.intervalMs) return;
    this.lastWrite.set(name, ms);
    const prev = this.previousUse.get(name);
    void this.keys.recordUse(name, { at: now, hash, ...(prev ? { previous: prev } : {}) }).catch((err: unknown) => {
      if (isNotFound(err)) return this.forget(name);
      // The next use after the interval tries again; the time stays remembered here meanwhile.
      this.lastWrite.delete(name);
      this.log.warn({ err, keyName: name }, 'could not record key activity; will retry on its next use');
    });
  }

  lastUsed(name: string): number | undefined {
    return this.lastUse.get(name);
  }

  forget(name: string): void {
    this.lastUse.delete(name);
    this.lastWrite.delete(name);
    this.previousUse.delete(name);
  }

  private async follow(): Promise<void> {
    const { store, prefix } = this.keys.ctx;
    for (let failures = 0; !this.stopped(); ) {
      try {
        this.state = { name: 'Starting' };
        const from = await store.currentRevision();
        // Deletions made while not following (before a restart of this loop) are caught up here.
        for (const name of [...this.lastUse.keys()]) await this.keys.get(name).catch((err: unknown) => isNotFound(err) && this.forget(name));
        if (this.stopped()) return;
        const watch = store.watch<KubeObject>(prefix, from);
        this.state = { name: 'Following', watch };
        await watch.started;
        failures = 0;
        for await (const e of watch) if (e.type === 'DELETED') this.forget(e.object.metadata.name!);
        if (this.stopped()) return;
      } catch (err) {
        if (this.stopped()) return;
        failures++;
        this.log.warn({ err, failedAttempts: failures }, 'key activity: following key deletions failed; retrying');
      }
      this.state = { name: 'Backoff' };
      // 1 s after a failure, doubling to 30 s while they go on.
      await new Promise((r) => setTimeout(r, Math.min(30_000, 1000 * 2 ** Math.max(0, failures - 1))).unref());
    }
  }

  /** A method, not `this.state.name === 'Stopped'` inline: TypeScript would keep a narrowing across awaits. */
  private stopped(): boolean {
    return this.state.name === 'Stopped';
  }
}
