/** The registry of both kinds over one Store. */
import { resourceModels } from '../api/model.js';
import { defaultGroup } from '../api/resources.js';
import type { Store } from '../store/types.js';
import { ResourceRegistry, type RegistryOptions } from './resource-registry.js';

export interface Registry {
  teams: ResourceRegistry;
  ownedaccesskeys: ResourceRegistry;
  /** The registry of a resource by its plural name, or undefined. */
  byPlural(plural: string): ResourceRegistry | undefined;
  store: Store;
}

export function createRegistry(store: Store, opts: RegistryOptions & { group?: string } = {}): Registry {
  const models = resourceModels(opts.group ?? defaultGroup);
  const teams = new ResourceRegistry(store, models.teams, opts);
  const ownedaccesskeys = new ResourceRegistry(store, models.ownedaccesskeys, opts);
  const byPlural = new Map<string, ResourceRegistry>([
    ['teams', teams],
    ['ownedaccesskeys', ownedaccesskeys],
  ]);
  return { teams, ownedaccesskeys, byPlural: (p) => byPlural.get(p), store };
}
