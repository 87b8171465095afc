import { breakGlassStatus, pendingStatus, goDurationMs } from '../access-request.js';
import type { FieldError } from '../field-errors.js';
import type { ResourceInfo } from '../resources.js';
import { isJsonMap, type AccessRequest, type KubeObject } from '../types.js';
import type { Strategy } from './strategy.js';
import { isDeepStrictEqual } from 'node:util';

/**
 * AccessRequests: a new one is Pending (a break-glass one Active, owing a review); what it asks is fixed once asked (an approver approves
 * what they read). The team's own limits (maxDuration, roles) are the admission chain's to judge,
 * as they need the Team.
 */
export function accessRequestStrategy(info: ResourceInfo): Strategy {
  return {
    info,
    prepareForCreate(obj) {
      // Break-glass is Active from its creation, in the same write: there is no moment it waits.
      const breakGlass = isJsonMap(obj.spec) && obj.spec.breakGlass === true;
      obj.status = breakGlass ? breakGlassStatus(obj as AccessRequest, new Date(obj.metadata.creationTimestamp!)) : pendingStatus();
    },
    validate: (obj) => validateDuration(obj),
    validateUpdate: (obj, old) => (isDeepStrictEqual(obj.spec, old.spec) ? [] : [{ type: 'Forbidden', field: 'spec', detail: 'an AccessRequest is immutable once asked: create a new one' }]),
  };
}

function validateDuration(obj: KubeObject): FieldError[] {
  const duration = isJsonMap(obj.spec) ? obj.spec.duration : undefined;
  if (typeof duration !== 'string' || goDurationMs(duration) !== undefined) return [];
  return [{ type: 'Invalid', field: 'spec.duration', value: duration, detail: 'must be a duration such as 4h, 30m, 1h30m or 20s' }];
}
