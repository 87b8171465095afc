import { unknownGrants } from '../grant-vocabulary.js';
import type { ResourceInfo } from '../resources.js';
import type { Strategy } from './strategy.js';

/**
 * Teams need nothing beyond their schema and the metadata rules. The API document lets
 * clusterRoles name roles of clusters elsewhere and access rules any verb, so a word this API does
 * not know is accepted with a warning (the reconciler refuses it: in git it is a typo).
 */
export function teamStrategy(info: ResourceInfo): Strategy {
  return {
    info,
    prepareForCreate() {},
    validate: () => [],
    validateUpdate: () => [],
    warnings: (obj) => unknownGrants(obj).map((g) => `${g.message} (accepted, but it grants nothing on this API)`),
  };
}
