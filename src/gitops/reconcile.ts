/** One reconciliation: source -> validate -> plan -> apply -> report. */
import { adoptedKeyHolders } from './adopted-keys.js';
import { teamHolderNames, teamHolderNameWarnings } from './team-holder-names.js';
import { defaultWarnExpiryMs, defaultWarnUnusedMs } from '../auth/key-health.js';
import { systemClock, type Clock } from '../clock.js';
import { resourceModels } from '../api/model.js';
import type { KubeObject, OwnedAccessKey, Team } from '../api/types.js';
import { accessChange, namedIn } from './plan/access-change.js';
import type { ApiClient, Plural } from '../client/types.js';
import { applyPlan } from './apply/apply.js';
import { sourceFolders } from './keys/file-sink.js';
import { keySecretOwnerErrors, ownersFromSourceId } from './keys/owner-allow-list.js';
import { loadSodium, type KeyDelivery } from './keys/github-secrets.js';
import type { PolicySource } from './policy/at-ref.js';
import { draftReconcile, planObject, type Plan, type PlanOptions } from './plan/plan.js';
import { attributeFromTrail, listLive } from './read-live.js';
import { nextRotation } from './plan/rotation.js';
import { withholdUnnamed } from './plan/withheld.js';
import { keyHealthSection } from './report/key-health.js';
import { buildReport, type Report, type ReportInput } from './report/report.js';
import { loadSource, type LoadedSource, type SourceOptions } from './source/load.js';
import { checkTeamReferences, deletedTeamKeys, teamReferenceWarnings } from './team-references.js';
import { validateManifests, type DesiredObject } from './validate.js';
import { append } from './append.js';

export interface ReconcileOptions extends Omit<PlanOptions, 'sourceId'> {
  mode: 'plan' | 'apply';
  source: SourceOptions;
  client: ApiClient;
  concurrency: number;
  keyDir?: string;
  /** Delivers keys of OwnedAccessKeys annotated with key-secret (GitHub Actions secrets). */
  keyDelivery?: KeyDelivery;
  onProgress?: (done: number, total: number) => void;
  signal?: AbortSignal;
  /** The source already read (the daemon reads a revision once and plans it again on API changes). */
  loaded?: LoadedSource;
  /**
   * Report drift without reverting it: an action on an object someone else changed is reported
   * and skipped; changes that came from git are still applied.
   */
  reportDriftOnly?: boolean;
  /**
   * Pull-request mode: the source is untrusted, so a change shows live values only for fields its
   * manifest names (plan/withheld.ts).
   */
  withholdUnnamedLiveValues?: boolean;
  /**
   * The GitHub owners key-secret may name (keys/owner-allow-list.ts); default: the owner in the
   * source's id when it is a github.com repository, else any.
   */
  keySecretOwners?: string[];
  /** A folder of Policy objects every desired object must satisfy (read on every run), or that folder at a git ref. */
  policyDir?: PolicySource;
  /**
   * Reports list live keys expiring within this (default 14d) and unused for longer than
   * warnUnusedMs (default 90d); not in pull-request mode (withholdUnnamedLiveValues).
   */
  warnExpiryMs?: number;
  warnUnusedMs?: number;
  /** "Now" for scheduled rotations (rotate-every) and the key health section; default the system\'s. */
  now?: Clock;
}

const driftReason = 'drift reported, not reverted (run with --self-heal to revert it)';

export interface Reconciled {
  report: Report;
  plan?: Plan;
  loaded: LoadedSource;
  /** What the plan was made from: saved plans record both. */
  desired?: DesiredObject[];
  live?: Record<Plural, KubeObject[]>;
  /** Planned in pull-request mode (withholdUnnamedLiveValues): a saved plan withholds what the report does. */
  withheld?: true;
  /** When the next scheduled rotation falls due (none: no key has rotate-every): a daemon re-plans by then even if nothing changed. */
  nextRotationAt?: Date;
}

function unidentifiedPrune(loaded: LoadedSource): string {
  return `${loaded.description} is not in a git work tree, so nothing names it the same way on the next run: pruning needs an explicit id (--source-id NAME)`;
}

const modelsFor = (apiVersion: string) => resourceModels(apiVersion.split('/')[0]);

function sourceInfo(loaded: LoadedSource): Report['source'] {
  return { id: loaded.id, description: loaded.description, ...(loaded.revision ? { revision: loaded.revision } : {}) };
}

/**
 * Loads now what a cycle would load only once it needs it (the policy engine; the sealing of keys
 * delivered to GitHub): a long-running command (watch, serve's sidecar) then keeps the code it
 * started with when the install under it is rebuilt or upgraded. The CLI is a bundle whose chunks
 * a later build names otherwise (scripts/bundle-cli.mjs): a cycle that loaded one late failed with
 * "Cannot find module" until the process was restarted (found by a review).
 */
export async function loadCycleModules(opts: { policyDir?: unknown; keyDelivery?: unknown }): Promise<void> {
  if (opts.policyDir) await Promise.all([import('./policy/evaluate.js'), import('./policy/access-policy.js')]);
  if (opts.keyDelivery) await loadSodium();
}

/** Checks the manifests only: no server is asked. */
// The policies (and CEL with them) load only when a policy folder is given.
export async function validateSource(source: SourceOptions, apiVersion: string, policyDir?: PolicySource): Promise<Reconciled> {
  const loaded = await loadSource(source);
  const { desired, errors } = validateManifests(loaded.manifests, Object.values(modelsFor(apiVersion)));
  if (policyDir && loaded.errors.length + errors.length === 0) append(errors, await (await import('./policy/evaluate.js')).checkPolicyDir(policyDir, desired));
  const warnings = teamHolderNameWarnings(desired);
  const report = buildReport({ mode: 'validate', source: sourceInfo(loaded), target: '(none)', errors: [...loaded.errors, ...errors], ...(warnings.length ? { warnings } : {}) });
  return { report, loaded };
}

export async function reconcile(opts: ReconcileOptions): Promise<Reconciled> {
  const { client } = opts;
  const loaded = opts.loaded ?? (await loadSource(opts.source));
  const models = modelsFor(client.apiVersion);
  const { desired, errors } = validateManifests(loaded.manifests, Object.values(models));
  const base: Pick<ReportInput, 'mode' | 'source' | 'target' | 'warnings' | 'keyHealth' | 'now' | 'keySecretOwners' | 'accessChange'> = { mode: opts.mode, source: sourceInfo(loaded), target: client.target, now: (opts.now ?? systemClock)() };
  if (loaded.errors.length + errors.length > 0) return { report: buildReport({ ...base, errors: [...loaded.errors, ...errors] }), loaded };
  const { live, allKeys } = await listLive(client);
  const owners = opts.keySecretOwners ?? ownersFromSourceId(loaded.id);
  if (owners) base.keySecretOwners = owners;
  const policyRun = opts.policyDir ? await (await import('./policy/evaluate.js')).runPolicyDir(opts.policyDir, desired, live) : undefined;
  const refErrors = [...checkTeamReferences(desired, live.teams), ...adoptedKeyHolders(desired, live.ownedaccesskeys, loaded.id, loaded.formerIds, opts.withholdUnnamedLiveValues), ...teamHolderNames(desired, live), ...(owners ? keySecretOwnerErrors(desired, owners) : []), ...(policyRun?.errors ?? [])];
  const warnings = teamReferenceWarnings(desired, live.teams);
  Object.assign(base, { warnings });
  if (refErrors.length > 0) return { report: buildReport({ ...base, errors: refErrors }), loaded };
  const planOpts: PlanOptions = { sourceId: loaded.id, formerSourceIds: loaded.formerIds, prune: opts.prune, allowEmpty: opts.allowEmpty, maxPrune: opts.maxPrune, now: opts.now ?? systemClock };
  // Planned once: the audit trail read below names the changes again from this one diff.
  const { plan, drafted } = draftReconcile(desired, live, models, planOpts);
  // Keys this run deletes are not worth a warning; Login keys (never planned) are.
  const deleted = new Set(plan.actions.filter((a) => a.plural === 'ownedaccesskeys' && a.type === 'delete').map((a) => a.name));
  // Pull-request mode shows nothing live the manifests do not name: no key list in its comment.
  const keyHealth = opts.withholdUnnamedLiveValues ? undefined : keyHealthSection(allKeys.filter((k) => !deleted.has(k.metadata.name!)), base.now!, { warnExpiryMs: opts.warnExpiryMs ?? defaultWarnExpiryMs, warnUnusedMs: opts.warnUnusedMs ?? defaultWarnUnusedMs });
  if (keyHealth) base.keyHealth = keyHealth;
  const orphans = deletedTeamKeys(plan, desired, live);
  if (orphans.errors.length > 0) return { report: buildReport({ ...base, errors: orphans.errors }), loaded };
  if (orphans.refused && !plan.refused) plan.refused = orphans.refused;
  if (opts.prune && !loaded.identified) plan.refused = unidentifiedPrune(loaded);
  const byKey = new Map(desired.map((d) => [`${d.plural}/${d.obj.metadata.name}`, d]));
  await attributeFromTrail(client, plan, drafted, live);
  if (opts.withholdUnnamedLiveValues) plan.actions = plan.actions.map((a) => withholdUnnamed(a, byKey.get(`${a.plural}/${a.name}`)?.obj));
  if (opts.reportDriftOnly && opts.mode === 'apply') {
    // A due rotation stays on the skipped action: the drift is left, the key is still rotated.
    plan.actions = plan.actions.map((a) => (a.drift ? { ...a, type: 'skip', reason: driftReason } : a));
  }
  // Who gains and loses what, as the server will decide it once the plan is applied; rules about it judged here.
  const access = accessChange({ teams: live.teams as Team[], keys: allKeys as OwnedAccessKey[], plan, group: client.apiVersion.split('/')[0]!, now: base.now!, ...(opts.withholdUnnamedLiveValues ? { mayName: namedIn(desired) } : {}) });
  base.accessChange = access;
  const accessErrors = policyRun ? (await import('./policy/access-policy.js')).checkAccessPolicies(policyRun.policies, access, desired) : [];
  if (accessErrors.length > 0) return { report: buildReport({ ...base, errors: accessErrors }), loaded };
  const nextRotationAt = nextRotation(desired, live);
  const next = { ...(nextRotationAt ? { nextRotationAt } : {}), ...(opts.withholdUnnamedLiveValues ? { withheld: true as const } : {}) };
  if (opts.mode === 'plan' || plan.refused) return { report: buildReport({ ...base, errors: [], plan }), plan, loaded, desired, live, ...next };
  const changeSet = await applyPlan(client, plan.actions, {
    concurrency: opts.concurrency,
    ...(opts.keyDir ? { keyDir: opts.keyDir } : {}),
    ...(opts.keyDelivery ? { keyDelivery: opts.keyDelivery } : {}),
    // file: sinks start relative paths at --key-dir and never write into the source's repository.
    fileSinks: { refuse: plan.actions.some((a) => a.keySecret?.startsWith('file:')) ? await sourceFolders(opts.source) : [] },
    ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
    replan: async (a) => {
      const [desiredNow, liveNow] = [byKey.get(`${a.plural}/${a.name}`), await client.get(a.plural, a.name)];
      if (!desiredNow && !liveNow) return { ...a, type: 'skip', reason: 'deleted by someone else since the plan' };
      // What the plan-time guards would say of the object as it is now: one made under the name
      // since the plan (a create that met AlreadyExists) would otherwise be adopted unjudged, a
      // key squatted with a value its maker chose given the team's rights (found by a review).
      if (desiredNow && liveNow) {
        const refused = [...adoptedKeyHolders([desiredNow], a.plural === 'ownedaccesskeys' ? [liveNow] : [], loaded.id, loaded.formerIds), ...teamHolderNames([desiredNow], { ...live, [a.plural]: [liveNow] })];
        if (refused.length > 0) throw new Error(`refused on re-planning against the object as it is now: ${refused.map((e) => e.message).join('; ')}`);
      }
      return planObject(models[a.plural], desiredNow, liveNow, planOpts);
    },
  });
  return { report: buildReport({ ...base, errors: [], plan, changeSet }), plan, loaded, ...next };
}
