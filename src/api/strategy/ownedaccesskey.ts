import type { FieldError } from '../field-errors.js';
import type { ResourceInfo } from '../resources.js';
import { generateKey, isAcceptedKeyValue, keyValueRule } from '../key-format.js';
import { holderNameErrors } from '../names.js';
import { isJsonMap, type KubeObject } from '../types.js';
import type { Strategy } from './strategy.js';

const subjects = ['user', 'team', 'subject'] as const;

export interface AccessKeyPolicy {
  /** The longest ttl the server allows; keys that never expire are refused too. */
  maxTtlSeconds?: number;
}

/** Access keys: a server-generated key when none is supplied, and exactly one owning subject. */
export function ownedAccessKeyStrategy(info: ResourceInfo, policy: AccessKeyPolicy = {}): Strategy {
  return {
    info,
    prepareForCreate(obj) {
      if (isJsonMap(obj.spec) && obj.spec.key === undefined) obj.spec.key = generateKey();
    },
    validate: (obj, old) => [...validateKeyValue(obj), ...validateSubject(obj, old), ...holderNameErrors(info.kind, obj, old), ...validateTtl(obj, old, policy)],
    validateUpdate: () => [],
  };
}

/**
 * The checksum of a supplied value in the key format (the schema checks only its shape): a `tk_`
 * value that fails it is refused, so every value with the prefix is one a scanner can confirm.
 * The value is never echoed.
 */
function validateKeyValue(obj: KubeObject): FieldError[] {
  const key = isJsonMap(obj.spec) ? obj.spec.key : undefined;
  if (typeof key !== 'string' || isAcceptedKeyValue(key)) return [];
  return [{ type: 'Invalid', field: 'spec.key', detail: keyValueRule }];
}

const ttlOf = (obj: KubeObject | undefined) => (isJsonMap(obj?.spec) && typeof obj.spec.ttl === 'number' ? obj.spec.ttl : 0);

/** The server-wide maximum applies to new keys and to changed ttls, not to keys left as they were. */
function validateTtl(obj: KubeObject, old: KubeObject | undefined, policy: AccessKeyPolicy): FieldError[] {
  const max = policy.maxTtlSeconds;
  if (!max) return [];
  const ttl = ttlOf(obj);
  if (old && ttlOf(old) === ttl) return [];
  if (ttl > 0 && ttl <= max) return [];
  return [{ type: 'Invalid', field: 'spec.ttl', value: ttl, detail: `must be between 1 and ${max} seconds (the server's maximum ttl)` }];
}

/** Exactly one holder; an update that leaves a stored key's holders as they were is not judged on them (ratchet.ts). */
function validateSubject(obj: KubeObject, old: KubeObject | undefined): FieldError[] {
  if (!isJsonMap(obj.spec)) return [];
  const spec = obj.spec;
  const before = isJsonMap(old?.spec) ? old.spec : undefined;
  if (before && subjects.every((s) => spec[s] === before[s])) return [];
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
