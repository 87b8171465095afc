/** One reconciliation: source -> validate -> plan -> apply -> report. */
import { resourceModels } from '../api/model.js';
import type { KubeObject } from '../api/types.js';
import type { ApiClient, Plural } from '../client/types.js';
import { applyPlan } from './apply/apply.js';
import { planObject, planReconcile, type Plan, type PlanOptions } from './plan/plan.js';
import { buildReport, type Report } from './report/report.js';
import { loadSource, type LoadedSource, type SourceOptions } from './source/load.js';
import { checkTeamReferences, validateManifests } from './validate.js';

export interface ReconcileOptions extends Omit<PlanOptions, 'sourceId'> {
  mode: 'plan' | 'apply';
  source: SourceOptions;
  client: ApiClient;
  concurrency: number;
  keyDir?: string;
  onProgress?: (done: number, total: number) => void;
  signal?: AbortSignal;
  /** The source already read (the daemon reads a revision once and plans it again on API changes). */
  loaded?: LoadedSource;
  /**
   * Report drift without reverting it: an action on an object someone else changed is reported
   * and skipped; changes that came from git are still applied.
   */
  reportDriftOnly?: boolean;
}

const driftReason = 'drift reported, not reverted (run with --self-heal to revert it)';

export interface Reconciled {
  report: Report;
  plan?: Plan;
  loaded: LoadedSource;
}

function unidentifiedPrune(loaded: LoadedSource): string {
  return `${loaded.description} is not in a git work tree, so nothing names it the same way on the next run: pruning needs an explicit id (--source-id NAME)`;
}

const modelsFor = (apiVersion: string) => resourceModels(apiVersion.split('/')[0]);

function sourceInfo(loaded: LoadedSource): Report['source'] {
  return { id: loaded.id, description: loaded.description, ...(loaded.revision ? { revision: loaded.revision } : {}) };
}

/** Checks the manifests only: no server is asked. */
export async function validateSource(source: SourceOptions, apiVersion: string): Promise<Reconciled> {
  const loaded = await loadSource(source);
  const { errors } = validateManifests(loaded.manifests, Object.values(modelsFor(apiVersion)));
  const report = buildReport({ mode: 'validate', source: sourceInfo(loaded), target: '(none)', errors: [...loaded.errors, ...errors] });
  return { report, loaded };
}

export async function reconcile(opts: ReconcileOptions): Promise<Reconciled> {
  const { client } = opts;
  const loaded = opts.loaded ?? (await loadSource(opts.source));
  const models = modelsFor(client.apiVersion);
  const { desired, errors } = validateManifests(loaded.manifests, Object.values(models));
  const base = { mode: opts.mode, source: sourceInfo(loaded), target: client.target };
  if (loaded.errors.length + errors.length > 0) return { report: buildReport({ ...base, errors: [...loaded.errors, ...errors] }), loaded };
  const live: Record<Plural, KubeObject[]> = { teams: await client.list('teams'), ownedaccesskeys: await client.list('ownedaccesskeys') };
  const refErrors = checkTeamReferences(desired, live.teams);
  if (refErrors.length > 0) return { report: buildReport({ ...base, errors: refErrors }), loaded };
  const planOpts: PlanOptions = { sourceId: loaded.id, formerSourceIds: loaded.formerIds, prune: opts.prune, allowEmpty: opts.allowEmpty, maxPrune: opts.maxPrune };
  const plan = planReconcile(desired, live, models, planOpts);
  if (opts.prune && !loaded.identified) plan.refused = unidentifiedPrune(loaded);
  if (opts.reportDriftOnly && opts.mode === 'apply') {
    plan.actions = plan.actions.map((a) => (a.drift ? { ...a, type: 'skip', reason: driftReason } : a));
  }
  if (opts.mode === 'plan' || plan.refused) return { report: buildReport({ ...base, errors: [], plan }), plan, loaded };
  const byKey = new Map(desired.map((d) => [`${d.plural}/${d.obj.metadata.name}`, d]));
  const changeSet = await applyPlan(client, plan.actions, {
    concurrency: opts.concurrency,
    ...(opts.keyDir ? { keyDir: opts.keyDir } : {}),
    ...(opts.onProgress ? { onProgress: opts.onProgress } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
    replan: async (a) => {
      const [desiredNow, liveNow] = [byKey.get(`${a.plural}/${a.name}`), await client.get(a.plural, a.name)];
      if (!desiredNow && !liveNow) return { ...a, type: 'skip', reason: 'deleted by someone else since the plan' };
      return planObject(models[a.plural], desiredNow, liveNow, planOpts);
    },
  });
  return { report: buildReport({ ...base, errors: [], plan, changeSet }), plan, loaded };
}
