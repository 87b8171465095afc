/** The registry of every served kind over one Store. */
import { FieldCipher } from '../api/field-cipher.js';
import { servedModels } from '../api/model.js';
import { apiPlurals, defaultGroup, type ApiPlural } from '../api/resources.js';
import type { StoredApiObject } from '../api/secrets.js';
import type { AccessKeyPolicy } from '../api/strategy/ownedaccesskey.js';
import type { FenceOf } from '../store/fence.js';
import { fencedStore } from '../store/fenced-store.js';
import type { Indexer, Store, StoreWatch } from '../store/types.js';
import { InFlight } from './in-flight.js';
import { ResourceRegistry, type RegistryOptions } from './resource-registry.js';
import { bindToTeam } from './team-binding.js';
import { bindRequestToTeam } from './request-binding.js';
import { cacheIndexers } from './indexes.js';

export interface Registry {
  teams: ResourceRegistry;
  ownedaccesskeys: ResourceRegistry;
  federatedcredentials: ResourceRegistry;
  /** Temporary team membership (AccessRequest): served, never declared in Git. */
  accessrequests: ResourceRegistry;
  /** The registry of a resource by its plural name, or undefined. */
  byPlural(plural: string): ResourceRegistry | undefined;
  /** The registry of a served kind (`Team`), or undefined for any other kind. */
  byKind(kind: string): ResourceRegistry | undefined;
  /** Every served kind's changes from a revision, for an informer over all kinds (the garbage collector). */
  informerWatch(fromRevision: number): StoreWatch;
  /** The store's current revision, where an informer starts. */
  currentRevision(): Promise<number>;
  /**
   * The store underneath, for what is the host's and not a kind's: health checks and compaction.
   * Reads of objects go through the kinds' registries, which alone know their keys.
   */
  store: Store;
  /** Resolves once no write of either kind is under way, or after timeoutMs (true when drained). */
  drained(timeoutMs: number): Promise<boolean>;
  /**
   * The same registry for background work: every write through it carries the fence `fenceOf`
   * gives at the moment of the write (store/fence.ts), so a replica that lost the lease writes nothing.
   */
  fencedBy(fenceOf: FenceOf): Registry;
}

/**
 * Access keys are found by the SHA-256 hash of their value, and by their previous value's after a
 * rotation (key-rotation.ts): the store's one secondary index, two values per key at most, each
 * unique among keys.
 */
export const accessKeyIndexer: Indexer = (key, obj) => {
  if (!key.startsWith('/ownedaccesskeys/')) return undefined;
  const sealed = (obj as StoredApiObject).sealed;
  if (!sealed?.keyHash) return undefined;
  return sealed.previousKeyHash ? [sealed.keyHash, sealed.previousKeyHash] : sealed.keyHash;
};

export function createRegistry(store: Store, opts: RegistryOptions & { group?: string; keyPolicy?: AccessKeyPolicy } = {}): Registry {
  store.setIndexer(accessKeyIndexer);
  store.cache?.().setCacheIndexers(cacheIndexers);
  const models = servedModels(opts.group ?? defaultGroup, opts.keyPolicy);
  // One count of writes under way, one cipher and one clock for the registry and its fenced views.
  return registryOver(store, models, { ...opts, cipher: opts.cipher ?? FieldCipher.ephemeral(), inFlight: new InFlight() });
}

/** The kinds' registries over `store` (the store itself, or a fenced view of it), sharing `shared`. */
function registryOver(store: Store, models: ReturnType<typeof servedModels>, shared: RegistryOptions & { inFlight: InFlight }): Registry {
  const inFlight = shared.inFlight;
  const teams = new ResourceRegistry(store, models.teams, shared);
  const ownedaccesskeys = new ResourceRegistry(store, models.ownedaccesskeys, shared);
  ownedaccesskeys.ctx.prepareWrite = bindToTeam(teams.ctx);
  const federatedcredentials = new ResourceRegistry(store, models.federatedcredentials, shared);
  // A rule for a team is bound to it as a team key is: a team re-created under the name inherits no trust.
  federatedcredentials.ctx.prepareWrite = bindToTeam(teams.ctx);
  const accessrequests = new ResourceRegistry(store, models.accessrequests, shared);
  // A request is bound to its team's uid too (request-binding.ts): a team re-created under the name is granted to no one.
  accessrequests.ctx.prepareWrite = bindRequestToTeam(teams.ctx);
  const registries: Record<ApiPlural, ResourceRegistry> = { teams, ownedaccesskeys, federatedcredentials, accessrequests };
  const byPlural = (p: string) => ((apiPlurals as readonly string[]).includes(p) ? registries[p as ApiPlural] : undefined);
  const byKind = (kind: string) => Object.values(registries).find((r) => r.info.kind === kind);
  const informerWatch = (from: number) => store.watch('/', from);
  const currentRevision = () => store.currentRevision();
  const drained = (timeoutMs: number) => inFlight.drained(timeoutMs);
  const fencedBy = (fenceOf: FenceOf) => registryOver(fencedStore(store, fenceOf), models, shared);
  return { teams, ownedaccesskeys, federatedcredentials, accessrequests, byPlural, byKind, informerWatch, currentRevision, store, drained, fencedBy };
}
