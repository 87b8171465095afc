/**
 * Executes a plan through an ApiClient. Teams are written before keys and keys deleted before
 * teams; within a stage objects go in parallel up to --concurrency. A write that loses a race
 * (the object changed since it was planned: 409 Conflict) re-reads the object and re-plans it, a few times at most.
 * Failures are results, not exceptions.
 */
import { notStartedNote } from './not-started.js';
import { servedPlurals } from '../../api/resources.js';
import type { KubeObject } from '../../api/types.js';
import { pool } from '../pool.js';
import { lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { ClientError, type ApiClient } from '../../client/types.js';
import type { FileSinkOptions } from '../keys/file-sink.js';
import type { KeyDelivery } from '../keys/github-secrets.js';
import { checkKeyFile, KeyFileError, keyNameError, writeKeyFile } from '../keys/key-file.js';
import { annotations, keyDirSink } from '../plan/annotations.js';
import type { PlanStep } from '../plan/plan.js';
import { deliveryTarget, pendingDelivery, sinkRefusal, type Delivered, type Sinks } from '../keys/key-delivery.js';
import { deliverAndRecord, recordDelivery, rotateAndDeliver, setAndDeliver } from './key-writes.js';
import { append } from '../append.js';

export type Result = 'Created' | 'Updated' | 'Replaced' | 'Deleted' | 'Unchanged' | 'Skipped' | 'Failed';

export interface ChangeSetEntry {
  action: PlanStep;
  result: Result;
  error?: string;
  /** Where a generated key was written (never the key itself). */
  keyFile?: string;
  /** The key-secret target the new key was delivered to. */
  keySecret?: string;
  /** A scheduled rotation: when the previous value stops working (as the server set it on confirmation). */
  previousValidUntil?: string;
  note?: string;
}

export interface ApplyOptions {
  concurrency: number;
  /** Where keys the server generates for new OwnedAccessKeys are written, one 0600 file each. */
  keyDir?: string;
  /** Where keys of OwnedAccessKeys annotated with key-secret go (GitHub secrets); unset: not configured. */
  keyDelivery?: KeyDelivery;
  /** file: sinks: where relative paths start and where keys may never be written (the source). */
  fileSinks?: FileSinkOptions;
  /** Reads the object again and plans it anew, after a conflict; without it (a saved plan) a conflict fails. */
  /** The action planned again against the object as it is now; a throw fails the action (a guard refused what it found). */
  replan?: (action: PlanStep) => Promise<PlanStep>;
  onProgress?: (done: number, total: number) => void;
  /** Stops starting new writes (SIGTERM); writes already sent complete. */
  signal?: AbortSignal;
}

const maxAttempts = 3;

/**
 * A lost race, by the Status reason: Conflict (the object changed since it was planned: the
 * resourceVersion precondition of an update, replace or delete) or AlreadyExists (created since).
 */
function isConflict(err: unknown): boolean {
  return err instanceof ClientError && (err.status.reason === 'Conflict' || err.status.reason === 'AlreadyExists');
}

/**
 * A created key that goes to a sink (key-secret, or its --key-dir file) is marked pending delivery
 * before the server makes its value, until its delivery is recorded (see pendingDelivery): a run
 * that dies in between leaves a mark the next plan reports and apply delivers again.
 */
function pendingBody(action: PlanStep, sink: string): NonNullable<PlanStep['body']> {
  const body = structuredClone(action.body!);
  body.metadata.annotations = { ...(body.metadata.annotations ?? {}), [annotations.keyDelivered]: pendingDelivery(sink) };
  return body;
}

/** The sink of an action that delivers a key, checked before anything is written (see sinkRefusal). */
async function checkedTarget(action: PlanStep, opts: Sinks): Promise<ReturnType<typeof deliveryTarget>> {
  const target = deliveryTarget(action, opts);
  if ('error' in target) return target;
  const refused = await sinkRefusal(action, target, opts);
  return refused ? { error: refused } : target;
}

async function execute(client: ApiClient, action: PlanStep, opts: ApplyOptions): Promise<ChangeSetEntry> {
  switch (action.type) {
    case 'unchanged':
      return { action, result: 'Unchanged' };
    case 'skip': {
      // Drift reported and left in place (no --self-heal) does not stop the key's scheduled rotation.
      if (!action.rotation) return { action, result: 'Skipped' };
      const target = await checkedTarget(action, opts);
      if ('error' in target) return { action, result: 'Failed', error: target.error };
      return withDelivery({ action, result: 'Skipped' }, await rotateAndDeliver(client, action, target, opts));
    }
    case 'create': {
      const target = action.keySecret ? await checkedTarget(action, opts) : undefined;
      if (target && 'error' in target) return { action, result: 'Failed', error: target.error };
      // A file: sink is the key's file: --key-dir's <name>.key beside it would announce (and write) it twice.
      const keyDir = action.keySecret?.startsWith('file:') ? undefined : opts.keyDir;
      // A key file that cannot be written safely (a planted link) stops the create: no key nobody receives.
      if (keyDir && action.plural === 'ownedaccesskeys') {
        const bad = await checkKeyFile(keyDir, action.name).then(() => undefined, (err: unknown) => keyFileFailure(err));
        if (bad) return { action, result: 'Failed', error: `${action.kind}/${action.name}: not created: ${bad}` };
      }
      // A key with no key-secret goes to its --key-dir file, which is then its sink of record.
      const keyFileSink = !target && opts.keyDir && action.plural === 'ownedaccesskeys' ? keyDirSink(action.name) : undefined;
      const sink = target ? action.keySecret! : keyFileSink;
      const created = await client.create(action.plural, sink ? pendingBody(action, sink) : action.body!);
      const key = (created.spec as { key?: string } | undefined)?.key;
      if (action.plural !== 'ownedaccesskeys' || !key) return { action, result: 'Created' };
      const entry: ChangeSetEntry = { action, result: 'Created' };
      if (keyDir) {
        const written = await writeKeyFile(keyDir, action.name, key).catch((err: unknown) => ({ error: keyFileFailure(err) }));
        if (typeof written !== 'string') {
          const next = keyFileSink ? 'its delivery stays pending: the next plan reports it and the next apply rotates it and writes it again' : 'set a new spec.key through the API to rotate it';
          return { action, result: 'Failed', error: `${action.kind}/${action.name}: created, but its key was not written: ${written.error}; ${next}` };
        }
        entry.keyFile = written;
        if (keyFileSink) {
          const recorded = await recordDelivery(client, action.plural, action.name, keyFileSink).then(() => undefined, (err: unknown) => (err instanceof Error ? err.message : String(err)));
          if (recorded) return { ...entry, result: 'Failed', error: `${action.kind}/${action.name}: created and its key written to ${written}, but recording that failed (${recorded}); the next run rotates it again, keeping this value working for the overlap` };
        }
      }
      else if (!target) entry.note = 'the server generated a key; it was not kept (give --key-dir to receive new keys)';
      return target ? withDelivery(entry, await deliverAndRecord(client, action, target, key, opts)) : entry;
    }
    case 'update': {
      if (action.rotation) {
        const target = await checkedTarget(action, opts);
        if ('error' in target) return { action, result: 'Failed', error: target.error };
        // git's changes first (a rotation alone carries only the resourceVersion guard, which writes nothing).
        if ((action.patch?.length ?? 0) > 1) await client.patch(action.plural, action.name, action.patch!);
        return withDelivery({ action, result: 'Updated' }, await rotateAndDeliver(client, action, target, opts));
      }
      const target = action.rotateKey ? await checkedTarget(action, opts) : undefined;
      if (target && 'error' in target) return { action, result: 'Failed', error: target.error };
      if (!target) {
        await client.patch(action.plural, action.name, action.patch!);
        return { action, result: 'Updated' };
      }
      return withDelivery({ action, result: 'Updated' }, await setAndDeliver(client, action, target, opts));
    }
    case 'replace': {
      const target = action.rotation ? await checkedTarget(action, opts) : undefined;
      if (target && 'error' in target) return { action, result: 'Failed', error: target.error };
      await client.replace(action.plural, action.name, action.body!);
      return target ? withDelivery({ action, result: 'Replaced' }, await rotateAndDeliver(client, action, target, opts)) : { action, result: 'Replaced' };
    }
    case 'delete':
      try {
        await client.delete(action.plural, action.name, { preconditions: action.preconditions! });
      } catch (err) {
        if (!(err instanceof ClientError && err.code === 404)) throw err;
      }
      return { action, result: 'Deleted', ...(await leftKeyFile(action, opts.keyDir)) };
  }
}

/**
 * A pruned key's file in --key-dir is left where it is (it may be read by something that should
 * learn the key is gone), but named: its value no longer works.
 */
async function leftKeyFile(action: PlanStep, keyDir: string | undefined): Promise<{ note?: string }> {
  if (!keyDir || action.plural !== 'ownedaccesskeys' || keyNameError(action.name)) return {};
  const path = join(keyDir, `${action.name}.key`);
  const there = await lstat(path).then((s) => s.isFile(), () => false);
  return there ? { note: `its key file ${path} is left in place and no longer works: delete it` } : {};
}

/** A key file's failure as a message: ours say what to fix; the system's name only the call that failed (never the key). */
function keyFileFailure(err: unknown): string {
  if (err instanceof KeyFileError) return err.message;
  const e = err as NodeJS.ErrnoException;
  return `${e.code ?? 'error'} ${e.syscall ?? ''} ${e.path ?? ''}`.replace(/\s+/g, ' ').trim();
}

/** A write that succeeded but whose key did not reach its secret is a failure of the run. */
function withDelivery(entry: ChangeSetEntry, delivered: Delivered): ChangeSetEntry {
  if ('error' in delivered) return { ...entry, result: 'Failed', error: delivered.error };
  return { ...entry, keySecret: delivered.keySecret, ...(delivered.previousValidUntil ? { previousValidUntil: delivered.previousValidUntil } : {}) };
}

async function run(client: ApiClient, first: PlanStep, opts: ApplyOptions): Promise<ChangeSetEntry> {
  let action = first;
  for (let attempt = 1; ; attempt++) {
    try {
      const entry = await execute(client, action, opts);
      if (action.type === first.type) return entry;
      // The report shows the plan; say what the object turned into when it changed under us.
      const replanned = `changed on the server since the plan; re-planned: ${action.type}${action.reason ? ` (${action.reason})` : ''}`;
      return { ...entry, note: entry.note ? `${replanned}; ${entry.note}` : replanned };
    } catch (err) {
      const failed = (e: unknown): ChangeSetEntry => ({ action, result: 'Failed', error: `${action.kind}/${action.name}: ${action.type} failed: ${e instanceof Error ? e.message : String(e)}` });
      if (isConflict(err) && opts.replan && attempt < maxAttempts) {
        // A re-plan may refuse what it finds (an object made under the name since the plan): the action fails.
        try {
          action = await opts.replan(action);
        } catch (refused) {
          return failed(refused);
        }
        continue;
      }
      return failed(err);
    }
  }
}

/**
 * The teams a key or FederatedCredential of this run still holds: its delete failed, or was
 * re-planned (its pruning disabled since the plan). Their Team's delete would have the server
 * collect it anyway; a review found a key someone had just protected gone with its team.
 */
const anyTeam = '\0any';

async function teamsHeld(client: ApiClient, ran: { planned: PlanStep; entry: ChangeSetEntry }[]): Promise<Map<string, string>> {
  const held = new Map<string, string>();
  for (const { planned: a, entry: e } of ran) {
    // The entry's action is the re-planned one (a skip); the plan's was a delete.
    if ((a.plural !== 'ownedaccesskeys' && a.plural !== 'federatedcredentials') || a.type !== 'delete' || e.result === 'Deleted') continue;
    let live: KubeObject | undefined;
    try {
      live = await client.get(a.plural, a.name);
    } catch {
      // Unread, it may be any team's: no team is deleted (fail closed).
      held.set(anyTeam, `${a.kind}/${a.name} (which could not be read again)`);
      continue;
    }
    const team = (live?.spec as { team?: string } | undefined)?.team;
    if (live && team && !held.has(team)) held.set(team, `${a.kind}/${a.name}`);
  }
  return held;
}

export async function applyPlan(client: ApiClient, actions: PlanStep[], opts: ApplyOptions): Promise<ChangeSetEntry[]> {
  const writes = (plural: string) => actions.filter((a) => a.plural === plural && a.type !== 'delete');
  const deletes = (plural: string) => actions.filter((a) => a.plural === plural && a.type === 'delete');
  // Owners first (the kind table's order: teams, then what refers to them), deletes in reverse.
  const stages = [...servedPlurals.map(writes), ...[...servedPlurals].reverse().map(deletes)];
  const total = actions.length;
  let done = 0;
  const entries: ChangeSetEntry[] = [];
  const ran: { planned: PlanStep; entry: ChangeSetEntry }[] = [];
  for (const stage of stages) {
    const held = stage[0]?.plural === 'teams' && stage[0].type === 'delete' ? await teamsHeld(client, ran) : new Map<string, string>();
    const stageEntries = await pool(stage, opts.concurrency, async (a) => {
      const holder = held.get(a.name) ?? held.get(anyTeam);
      const entry: ChangeSetEntry = opts.signal?.aborted
        ? { action: a, result: 'Skipped', note: notStartedNote }
        : holder
          ? { action: a, result: 'Failed', error: `${a.kind}/${a.name}: not deleted: ${holder} was not deleted by this run, and the server would delete it with its team` }
          : await run(client, a, opts);
      opts.onProgress?.(++done, total);
      return entry;
    });
    stage.forEach((planned, i) => ran.push({ planned, entry: stageEntries[i]! }));
    append(entries, stageEntries);
  }
  return entries;
}
