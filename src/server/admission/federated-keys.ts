/**
 * Federated keys (spec.type Federated) are minted only by the token exchange (src/federation): no
 * API write makes one, turns a key into one or out of one, or rewrites which job and rule it was
 * minted for. Anyone allowed may otherwise describe, disable or delete one.
 */
import { isDeepStrictEqual } from 'node:util';
import { isFederatedKey } from '../../api/key-types.js';
import type { KubeObject } from '../../api/types.js';
import { jobAnnotation, ruleAnnotation } from '../../api/federated-key.js';
import type { AdmissionPlugin } from './chain.js';
import { ownerReferencesOf } from '../../api/owner-references.js';

const origin = (k: KubeObject | undefined) => [k?.metadata.annotations?.[jobAnnotation], k?.metadata.annotations?.[ruleAnnotation], ownerReferencesOf(k?.metadata).filter((r) => r.kind === 'FederatedCredential')];

export function federatedKeyWriteRefusal(old: KubeObject | undefined, next: KubeObject): string | undefined {
  if (!old) return isFederatedKey(next) ? 'access keys of type Federated are minted only by the token exchange (a FederatedCredential and POST /auth/token)' : undefined;
  if (isFederatedKey(old) !== isFederatedKey(next)) return 'spec.type Federated is set only by the token exchange';
  if (isFederatedKey(old) && !isDeepStrictEqual(origin(old), origin(next))) return 'the job and the FederatedCredential a Federated key was minted for are written only by the token exchange';
  return undefined;
}

export const federatedKeysPlugin: AdmissionPlugin = {
  name: 'federated-keys',
  admit: ({ resource, old, object }) => (resource === 'ownedaccesskeys' && object ? federatedKeyWriteRefusal(old, object) : undefined),
};
