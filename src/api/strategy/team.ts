import type { ResourceInfo } from '../resources.js';
import type { Strategy } from './strategy.js';

/** Teams need nothing beyond their schema and the metadata rules. */
export function teamStrategy(info: ResourceInfo): Strategy {
  return {
    info,
    prepareForCreate() {},
    validate: () => [],
    validateUpdate: () => [],
  };
}
