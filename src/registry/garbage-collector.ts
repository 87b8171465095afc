/**
 * The garbage collector: deletes objects whose every owner is gone (Background), deletes the
 * dependents of an owner deleted in the foreground and lets the owner go once none blocks it, and
 * strips the owner reference from the dependents of an owner deleted with Orphan.
 *
 * Its first pass (and any pass after its watch had a gap, or a pass failed) reads every object
 * with an owner or being deleted, but keeps only those that can need action (gc-full-pass.ts): the
 * objects being deleted, those with an owner gone (each owner looked up once), their dependents. While
 * it follows every change, a pass reads only what the changes concern, as kube's graph builder
 * does: the objects being deleted (the `lifecycle` index), the dependents of each object deleted or
 * being deleted (the `owner` index), and the objects with owners written since the last pass. A
 * team key has an owner (its Team), so a full pass reads every team key (one at a time) and looks
 * up every Team; a targeted one costs what changed.
 */
import type { Logger } from 'pino';
import { isLoginKey } from '../api/key-types.js';
import { servedPlurals } from '../api/resources.js';
import type { KubeObject, OwnerReference } from '../api/types.js';
import type { StoreEvent, StoreWatch } from '../store/types.js';
import type { Registry } from './registry.js';
import { actionable } from './gc-full-pass.js';
import type { ResourceRegistry } from './resource-registry.js';
import { lostRace } from './storage-errors.js';
import { teamOf } from './team-binding.js';
import { PeriodicRunner } from '../background/periodic-runner.js';
import { ownerReferencesOf } from '../api/owner-references.js';

const manager = { fieldManager: 'teamkeys-garbage-collector', serverWrite: true };

export interface CollectionReport {
  deleted: string[];
  orphaned: string[];
  released: string[];
}

/** Changes that can give the collector work: deletions, and objects with owners or being deleted. */
function concernsCollector(e: StoreEvent): boolean {
  const meta = (e.object as Partial<KubeObject>).metadata;
  return e.type === 'DELETED' || Boolean(meta?.deletionTimestamp) || ownerReferencesOf(meta).length > 0;
}

/**
 * The collector's state; start and stop move it. Invariants:
 * - Idle: not started (a pass asked for still runs: tests and the access model call `pass`).
 * - Following: started; `watch` (once opened) follows every change, and passes run on the runner:
 *   shortly after each burst of changes, and every interval anyway. A loop of an earlier start
 *   ends when it sees the state is no longer its own object.
 * - Stopped: no watch, no timer, no pass in flight (stop waits for it). Start makes it Following again.
 */
type CollectorState = { name: 'Idle' } | { name: 'Following'; watch: StoreWatch | undefined } | { name: 'Stopped' };

export class GarbageCollector {
  readonly name = 'garbage-collector';
  private state: CollectorState = { name: 'Idle' };
  private readonly runner: PeriodicRunner<CollectionReport>;
  /** Whether the next pass must read every object with an owner (no watch yet, a gap in it, or a failed pass). */
  private full = true;
  /** Since the last pass began: uids of objects deleted, store keys of objects with owners written. */
  private goneUids = new Set<string>();
  private written = new Set<string>();
  /** What the last pass held in memory: whether it read everything, and how many objects it kept (tests read it). */
  lastPass = { full: false, kept: 0 };

  constructor(
    private readonly registry: Registry,
    private readonly log: Logger,
    private readonly opts: { debounceMs?: number; intervalMs?: number } = {},
  ) {
    this.runner = new PeriodicRunner({
      intervalMs: opts.intervalMs ?? 30_000,
      pass: () => this.sweep(),
      onError: (err) => this.log.warn({ err }, 'garbage collection pass failed; will retry'),
    });
  }

  /** Follows every change and runs a pass shortly after each burst, and every interval anyway. */
  async start(): Promise<void> {
    const state: CollectorState = { name: 'Following', watch: undefined };
    this.state = state;
    this.runner.start(this.opts.intervalMs ?? 30_000);
    const from = await this.registry.currentRevision();
    if (this.state !== state) return;
    void this.follow(state, from);
    this.schedule();
  }

  /** Stops following and waits for the pass in flight, so no write of the collector lands after. */
  async stop(): Promise<void> {
    const was = this.state;
    this.state = { name: 'Stopped' };
    if (was.name === 'Following') was.watch?.stop();
    await this.runner.stop();
  }

  private async follow(state: CollectorState & { name: 'Following' }, from: number): Promise<void> {
    let revision = from;
    while (this.state === state) {
      try {
        state.watch = this.registry.informerWatch(revision);
        // Stopped while the watch opened: stop's watch?.stop() did not see this one.
        if (this.state !== state) return state.watch.stop();
        for await (const e of state.watch) {
          revision = e.revision;
          if (!concernsCollector(e)) continue;
          const meta = (e.object as Partial<KubeObject>).metadata;
          if (e.type === 'DELETED') {
            if (meta?.uid) this.goneUids.add(meta.uid);
          } else this.written.add(e.key);
          this.schedule();
        }
        return;
      } catch (err) {
        if (this.state !== state) return;
        this.log.warn({ err }, 'garbage collector watch ended; resuming from the current revision');
        this.full = true; // changes in the gap are unseen: the next pass reads everything
        this.schedule();
        await new Promise((r) => setTimeout(r, 200));
        revision = await this.registry.currentRevision().catch(() => revision);
      }
    }
  }

  private schedule(): void {
    this.runner.soon(this.opts.debounceMs ?? 50);
  }

  /** One sweep over both kinds; asked while one runs, the next one, right after it. */
  async pass(): Promise<CollectionReport> {
    return (await this.runner.run()) ?? { deleted: [], orphaned: [], released: [] };
  }

  private registryOf(kind: string): ResourceRegistry | undefined {
    return this.registry.byKind(kind);
  }

  private async sweep(): Promise<CollectionReport> {
    try {
      return await this.collect();
    } catch (err) {
      this.full = true; // what the failed pass took from the change sets is read again
      throw err;
    }
  }

  private async collect(): Promise<CollectionReport> {
    const report: CollectionReport = { deleted: [], orphaned: [], released: [] };
    const objects = await this.concerned();
    const ownerAlive = this.aliveCheck();
    const ours = (ref: { apiVersion: string; kind: string }) => this.ours(ref);
    const label = (o: KubeObject) => `${o.kind}/${o.metadata.name}`;
    // A reference names its owner by uid, kind and name together (as exists() reads it): a uid
    // alone would let a reference naming one object tie its dependent to another.
    const names = (r: OwnerReference, owner: KubeObject) => ours(r) && r.uid === owner.metadata.uid && r.kind === owner.kind && r.name === owner.metadata.name;
    const refsTo = (d: KubeObject, owner: KubeObject) => ownerReferencesOf(d.metadata).filter((r) => names(r, owner));
    const dependentsOf = (owner: KubeObject) => objects.filter((d) => d !== owner && refsTo(d, owner).length > 0);
    const waiting = (o: KubeObject | undefined) => Boolean(o?.metadata.deletionTimestamp) && (o?.metadata.finalizers ?? []).includes('foregroundDeletion');
    const boundTo = (d: KubeObject, owner: KubeObject) => d.kind !== 'Team' && owner.kind === 'Team' && teamOf(d) === owner.metadata.name;
    // Keys made with a Login key end with that sign-in, whatever the deletion asked (keys.ts):
    // orphaning them would let a signed-out person keep what they made.
    // Keys a FederatedCredential minted end with it, though their team lives on (src/federation/mint.ts).
    const tiedTo = (d: KubeObject, owner: KubeObject) => d.kind === 'OwnedAccessKey' && ((owner.kind === 'OwnedAccessKey' && isLoginKey(owner)) || owner.kind === 'FederatedCredential');
    const byUid = new Map(objects.map((o) => [o.metadata.uid, o]));
    /** Whether another owner than `owner` keeps `d` (kube's "solid" owner: live, not waiting for its dependents). */
    const keptByAnother = async (d: KubeObject, owner: KubeObject) => {
      for (const r of ownerReferencesOf(d.metadata)) {
        if (names(r, owner) || !ours(r)) continue;
        if ((await ownerAlive(r)) && !waiting(byUid.get(r.uid))) return true;
      }
      return false;
    };

    // A stop ends the pass between two objects: what it did is done, the rest waits for a full pass after a new start.
    const stopping = () => {
      if (this.runner.stopping) this.full = true;
      return this.runner.stopping;
    };
    for (const owner of objects) {
      if (stopping()) return report;
      const finalizers = owner.metadata.finalizers ?? [];
      if (!owner.metadata.deletionTimestamp) continue;
      if (finalizers.includes('orphan')) {
        let done = true;
        for (const d of dependentsOf(owner)) {
          if (tiedTo(d, owner)) {
            if (d.metadata.deletionTimestamp) continue;
            if (await this.remove(d)) report.deleted.push(label(d));
            else done = false;
          } else if (await this.write(d, [this.withoutRefsTo(d, (r) => names(r, owner))])) report.orphaned.push(label(d));
          else done = false;
        }
        if (done && (await this.release(owner, 'orphan'))) report.released.push(label(owner));
      } else if (finalizers.includes('foregroundDeletion')) {
        const dependents = dependentsOf(owner);
        const letGo = new Set<KubeObject>();
        for (const d of dependents) {
          if (d.metadata.deletionTimestamp) continue;
          // A dependent another owner keeps is let go of, not deleted (kube's foreground deletion);
          // a team's keys always go with it (team-binding.ts).
          if (!boundTo(d, owner) && !tiedTo(d, owner) && (await keptByAnother(d, owner))) {
            if (await this.write(d, [this.withoutRefsTo(d, (r) => names(r, owner))])) {
              report.orphaned.push(label(d));
              letGo.add(d);
            }
          } else if (await this.remove(d)) report.deleted.push(label(d));
        }
        const blocking = dependents.filter((d) => !letGo.has(d) && refsTo(d, owner).some((r) => r.blockOwnerDeletion === true));
        if (blocking.length === 0 && (await this.release(owner, 'foregroundDeletion'))) report.released.push(label(owner));
      }
    }

    for (const d of objects) {
      if (stopping()) return report;
      const refs = ownerReferencesOf(d.metadata);
      // Owners of kinds this server does not serve cannot be checked, so such objects are left alone.
      if (refs.length === 0 || d.metadata.deletionTimestamp || !refs.every(ours)) continue;
      const live = await Promise.all(refs.map(ownerAlive));
      // A key whose owner key is gone (a sign-in ended), or whose FederatedCredential is (the rule that
      // minted it), no longer authenticates, whatever else owns it (its team): it goes too.
      const deadKey = d.kind === 'OwnedAccessKey' && refs.some((r, i) => (r.kind === 'OwnedAccessKey' || r.kind === 'FederatedCredential') && !live[i]);
      if ((deadKey || live.every((a) => !a)) && (await this.remove(d))) report.deleted.push(label(d));
    }
    if (report.deleted.length + report.orphaned.length + report.released.length > 0) this.log.info(report, 'garbage collected');
    return report;
  }

  /** Whether an owner reference names a kind this server serves, so exists() can check it. */
  private ours(ref: { apiVersion: string; kind: string }): boolean {
    return ref.apiVersion === this.registry.teams.info.apiVersion && this.registryOf(ref.kind) !== undefined;
  }

  /** exists(), each owner looked up once (a pass's view of which owners live). */
  private aliveCheck(): (ref: OwnerReference) => Promise<boolean> {
    const alive = new Map<string, Promise<boolean>>();
    return (ref) => {
      const id = `${ref.kind}/${ref.name}/${ref.uid}`;
      let known = alive.get(id);
      if (!known) alive.set(id, (known = this.exists(ref)));
      return known;
    };
  }

  /**
   * What a pass examines: on a full pass, of every object with an owner or being deleted, those
   * that can need action (gc-full-pass.ts); else what the changes since the last pass concern (see
   * the file's comment). Only objects with owners or being deleted can need the collector.
   */
  private async concerned(): Promise<KubeObject[]> {
    const kinds = servedPlurals.map((p) => this.registry.byPlural(p)!);
    const full = this.full || this.state.name !== 'Following' || !this.state.watch;
    const gone = this.goneUids;
    const written = this.written;
    this.full = false;
    this.goneUids = new Set();
    this.written = new Set();
    const byUid = new Map<string, KubeObject>();
    const add = (o: KubeObject) => {
      if (o.metadata.deletionTimestamp || ownerReferencesOf(o.metadata).length > 0) byUid.set(o.metadata.uid!, o);
    };
    if (full) {
      // Its own look at the owners: collect() looks again at those of the objects kept, after its
      // own writes, as it always did (an owner it removes may leave a dependent with none).
      const alive = this.aliveCheck();
      const ownerGone = async (refs: OwnerReference[]) => refs.every((r) => this.ours(r)) && (await Promise.all(refs.map(alive))).some((a) => !a);
      const objects = await actionable(kinds, ownerGone, () => this.runner.stopping);
      if (!objects) {
        this.full = true; // stopped midway: a pass after a new start reads everything again
        return [];
      }
      this.lastPass = { full, kept: objects.length };
      return objects;
    }
    for (const r of kinds) for (const o of await r.byField('lifecycle', 'terminating')) add(o);
    for (const key of written) {
      const r = kinds.find((k) => key.startsWith(k.ctx.prefix));
      const o = await r?.get(key.slice(r.ctx.prefix.length)).catch((err: unknown) => {
        if ((err as { reason?: string }).reason === 'NotFound') return undefined;
        throw err;
      });
      if (o) add(o);
    }
    const owners = [...gone, ...[...byUid.values()].filter((o) => o.metadata.deletionTimestamp).map((o) => o.metadata.uid!)];
    for (const uid of owners) for (const r of kinds) for (const o of await r.byField('owner', uid)) add(o);
    this.lastPass = { full, kept: byUid.size };
    return [...byUid.values()];
  }

  /** Whether the object an owner reference names still exists (a name lookup, then the uid). */
  private async exists(ref: OwnerReference): Promise<boolean> {
    try {
      return (await this.registryOf(ref.kind)!.get(ref.name)).metadata.uid === ref.uid;
    } catch (err) {
      // Only a definite NotFound means gone; a failing store must never look like a dead owner.
      if ((err as { reason?: string }).reason === 'NotFound') return false;
      throw err;
    }
  }

  /** A JSON patch guarded by the version we decided on; false when the object moved meanwhile. */
  private async write(obj: KubeObject, ops: unknown[]): Promise<boolean> {
    try {
      await this.registryOf(obj.kind)!.patch(obj.metadata.name!, 'json', [{ op: 'test', path: '/metadata/resourceVersion', value: obj.metadata.resourceVersion }, ...ops], manager);
      return true;
    } catch (err) {
      if (lostRace(err)) return false; // changed or gone: the next pass decides again
      throw err;
    }
  }

  /** The patch operation that drops an object's references matching `drop`. */
  private withoutRefsTo(d: KubeObject, drop: (r: OwnerReference) => boolean): unknown {
    const refs = ownerReferencesOf(d.metadata).filter((r) => !drop(r));
    return refs.length ? { op: 'replace', path: '/metadata/ownerReferences', value: refs } : { op: 'remove', path: '/metadata/ownerReferences' };
  }

  private release(owner: KubeObject, finalizer: string): Promise<boolean> {
    const rest = (owner.metadata.finalizers ?? []).filter((f) => f !== finalizer);
    return this.write(owner, [rest.length ? { op: 'replace', path: '/metadata/finalizers', value: rest } : { op: 'remove', path: '/metadata/finalizers' }]);
  }

  private async remove(obj: KubeObject): Promise<boolean> {
    try {
      // Guarded by the version we decided on: an object orphaned or changed since is left for the next pass.
      await this.registryOf(obj.kind)!.delete(obj.metadata.name!, {
        preconditions: { uid: obj.metadata.uid!, resourceVersion: obj.metadata.resourceVersion! },
        propagationPolicy: 'Background',
      });
      return true;
    } catch (err) {
      if (lostRace(err)) return false;
      throw err;
    }
  }
}
