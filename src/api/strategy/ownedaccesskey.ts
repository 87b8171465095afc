import type { FieldError } from '../field-errors.js';
import type { ResourceInfo } from '../resources.js';
import { generateKey } from '../secrets.js';
import { isJsonMap, type KubeObject } from '../types.js';
import type { Strategy } from './strategy.js';

const subjects = ['user', 'team', 'subject'] as const;

/** Access keys: a server-generated key when none is supplied, and exactly one owning subject. */
export function ownedAccessKeyStrategy(info: ResourceInfo): Strategy {
  return {
    info,
    prepareForCreate(obj) {
      if (isJsonMap(obj.spec) && obj.spec.key === undefined) obj.spec.key = generateKey();
    },
    validate: validateSubject,
    validateUpdate: () => [],
  };
}

function validateSubject(obj: KubeObject): FieldError[] {
  if (!isJsonMap(obj.spec)) return [];
  const spec = obj.spec;
  const set = subjects.filter((s) => typeof spec[s] === 'string' && spec[s] !== '');
  if (set.length === 1) return [];
  return [
    set.length === 0
      ? { type: 'Required', field: 'spec.user', detail: 'exactly one of spec.user, spec.team or spec.subject must be set' }
      : {
          type: 'Invalid',
          field: `spec.${set[1]}`,
          value: spec[set[1]!],
          detail: `exactly one of spec.user, spec.team or spec.subject may be set, found ${set.map((s) => `spec.${s}`).join(', ')}`,
        },
  ];
}
