/**
 * What a write reaches beyond the object it writes (issue 24): the garbage collector deleting
 * dependents, foreground deletion waiting on blockOwnerDeletion, finalizers holding deletions. The
 * model runs the collector itself (the server's is off) until it has nothing left to do, then
 * checks: nothing disappeared that the writer could not delete (other than dependents whose every
 * owner went, an owner that was there before the write), no new blockOwnerDeletion reference and
 * no new finalizer is held over an object by a writer without `delete` on it. Owners are matched
 * by uid alone here, as the collector of the released code did, so a reference whose uid is
 * another object's counts against that object.
 */
import pino from 'pino';
import type { OwnerReference } from '../../../src/api/types.js';
import { GarbageCollector } from '../../../src/registry/garbage-collector.js';
import type { Model, Probe } from './harness.js';
import type { MetaDraw } from './world.js';

export interface Stored {
  plural: 'teams' | 'ownedaccesskeys';
  name: string;
  uid: string;
  refs: OwnerReference[];
  finalizers: string[];
  terminating: boolean;
}

/** Every live object by uid. */
export async function snapshot(m: Model): Promise<Map<string, Stored>> {
  const out = new Map<string, Stored>();
  for (const plural of ['teams', 'ownedaccesskeys'] as const) {
    for (const o of (await m.registry[plural].list()).items) {
      const meta = o.metadata;
      out.set(meta.uid!, { plural, name: meta.name!, uid: meta.uid!, refs: meta.ownerReferences ?? [], finalizers: meta.finalizers ?? [], terminating: Boolean(meta.deletionTimestamp) });
    }
  }
  return out;
}

const mayDelete = (perms: Set<Probe> | undefined, o: Stored) => perms?.has(`delete ${o.plural}/${o.name}`) ?? false;

const kindOf = { teams: 'Team', ownedaccesskeys: 'OwnedAccessKey' } as const;
const noUid = '00000000-0000-0000-0000-000000000000';

/** `xs` filtered by `keep`, or all of `xs` when none is kept. */
const preferring = <T>(xs: T[], keep: (x: T) => boolean) => (xs.some(keep) ? xs.filter(keep) : xs);

/**
 * The metadata a write sends for a draw, resolved against the live objects as a hostile writer
 * would: an owner it may delete (so a check by name passes) and, for another uid, an object it
 * may not delete.
 */
export function resolveMeta(draw: MetaDraw, live: Map<string, Stored>, perms: Set<Probe>): { ownerReferences: OwnerReference[]; finalizers?: string[] } {
  const all = [...live.values()];
  const refs = draw.owners.map((d): OwnerReference => {
    const ofKind = preferring(
      all.filter((o) => kindOf[o.plural] === d.kind),
      (o) => mayDelete(perms, o),
    );
    const owner = ofKind.length > 0 ? ofKind[d.pick % ofKind.length]! : undefined;
    const other = preferring(
      all.filter((o) => o !== owner),
      (o) => !mayDelete(perms, o),
    );
    const uid = d.uid === 'own' && owner ? owner.uid : d.uid === 'other' && other.length > 0 ? other[d.otherPick % other.length]!.uid : noUid;
    return { apiVersion: 'management.service/v1', kind: d.kind, name: owner?.name ?? 'ghost', uid, ...(d.block ? { blockOwnerDeletion: true } : {}) };
  });
  return { ownerReferences: refs, ...(draw.finalizer ? { finalizers: ['example.com/hold'] } : {}) };
}

/** Runs the garbage collector until a pass changes nothing (bounded): "one sweep" of the model. */
export async function collect(m: Model): Promise<void> {
  const gc = new GarbageCollector(m.registry, pino({ level: 'silent' }));
  for (let i = 0; i < 8; i++) {
    const r = await gc.pass();
    if (r.deleted.length + r.orphaned.length + r.released.length === 0) return;
  }
}

export interface ReachViolation {
  probe: string;
}

/**
 * The reach invariant over one write: `before` are the live objects before it, `written` just
 * after it, `after` once the collector is done; `held` the writer's permissions before the write,
 * `heldAfter` after it (for what the write created, judged as the writer holds it then).
 */
export function reachViolations(
  before: Map<string, Stored>,
  written: Map<string, Stored>,
  after: Map<string, Stored>,
  held: Set<Probe> | undefined,
  heldAfter: Set<Probe> | undefined,
): ReachViolation[] {
  const found: ReachViolation[] = [];
  // Objects that went: the writer could delete them, or every owner they had is gone or being
  // deleted and one of them was there before (collected after owners whose deletion is judged too).
  for (const o of before.values()) {
    if (after.has(o.uid) || mayDelete(held, o)) continue;
    const owners = o.refs.map((r) => r.uid);
    const followedAnOwner = owners.length > 0 && owners.every((u) => after.get(u)?.terminating ?? true) && owners.some((u) => before.has(u));
    if (!followedAnOwner) found.push({ probe: `deleted ${o.plural}/${o.name}` });
  }
  // What the write set that acts later: owner references (the object goes when they go), blocking
  // references to a live owner, finalizers. Each needs delete on what it holds or lets go.
  const blocks = (o: Stored) => o.refs.filter((r) => r.blockOwnerDeletion === true).map((r) => r.uid);
  for (const o of written.values()) {
    const was = before.get(o.uid);
    const judge = was ? held : heldAfter;
    if (JSON.stringify(o.refs) !== JSON.stringify(was?.refs ?? []) && !mayDelete(judge, o)) found.push({ probe: `ties ${o.plural}/${o.name} to other owners` });
    for (const uid of blocks(o)) {
      const owner = written.get(uid);
      if (!owner || (was && blocks(was).includes(uid))) continue;
      if (!mayDelete(held, owner)) found.push({ probe: `blocks deletion of ${owner.plural}/${owner.name} (from ${o.plural}/${o.name})` });
    }
    const added = o.finalizers.filter((f) => !(was?.finalizers ?? []).includes(f));
    if (added.length > 0 && !mayDelete(judge, o)) found.push({ probe: `holds ${o.plural}/${o.name} with finalizer ${added.join(', ')}` });
  }
  return found;
}
