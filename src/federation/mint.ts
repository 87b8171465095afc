/**
 * The one place a Federated key is made: through the registry and the admission chain every write
 * meets, exempt only from what it declares below, acting for the rule's team or user with exactly
 * the rule's scope, owned by the rule (deleting the rule ends it: registry/garbage-collector.ts),
 * and saying in annotations which job it was minted for.
 */
import { jobAnnotation, mintedKeySpec, ruleAnnotation, ruleStamp } from '../api/federated-key.js';
import type { FederatedCredential, OwnedAccessKey } from '../api/types.js';
import type { Admit } from '../registry/context.js';
import type { Registry } from '../registry/registry.js';
import type { Requester } from '../registry/write-observer.js';
import { Holds, keyMintAdmission, type AdmissionContext, type PluginName } from '../server/admission/chain.js';


/** The field manager of every write the exchange makes. */
export const exchangeManager = 'teamkeys-token-exchange';

/**
 * The plugins a mint is exempt from, and why: escalation judged the rule when it was written (as
 * the key it mints, never expiring: server/admission/escalation.ts), and no key writes here;
 * federated-keys refuses type Federated to every API write (the exchange is its one writer);
 * ownership asks the writer for delete on the key it sets an owner on, and the job holds no key.
 * owner-references still checks the rule reference names the live rule, so a rule deleted while
 * the exchange ran mints nothing.
 */
export const exchangeExemptions: readonly PluginName[] = ['escalation', 'federated-keys', 'ownership'];

export interface MintedFederatedKey {
  name: string;
  key: string;
  ttlSeconds: number;
}

export async function mintFederatedKey(
  registry: Registry,
  rule: FederatedCredential,
  job: string,
  ttlSeconds: number,
  requester: Requester,
  admission?: AdmissionContext,
): Promise<MintedFederatedKey> {
  const keys = registry.ownedaccesskeys;
  const name = rule.metadata.name!;
  // Parallel jobs of one rule mint for one holder: each holds its quota place until its key is stored.
  const holds = new Holds();
  const who = { name: requester.username, groups: [], teams: [], clusterRoles: new Set<string>(), keyName: '' };
  const admit: Admit | undefined = admission && keyMintAdmission(admission, who, holds, exchangeExemptions, (refusal) => refusal);
  const { object } = await holds.around(() =>
    keys.create(
      {
        apiVersion: keys.info.apiVersion,
        kind: 'OwnedAccessKey',
        metadata: {
          generateName: `fed-${name.slice(0, 40)}-`,
          annotations: { [jobAnnotation]: job, [ruleAnnotation]: ruleStamp(rule) },
          ownerReferences: [{ apiVersion: rule.apiVersion, kind: 'FederatedCredential', name, uid: rule.metadata.uid! }],
        },
        spec: { ...mintedKeySpec(rule), displayName: `${job} (via FederatedCredential ${name})`, ttl: ttlSeconds },
      },
      // A job sets the value, not the user it acts for: the user's temporary access does not ride on it.
      { fieldManager: exchangeManager, requester, valueSetBy: `job:${job}`, ...(admit ? { admit } : {}) },
    ),
  );
  const created = object as OwnedAccessKey;
  return { name: created.metadata.name!, key: created.spec.key!, ttlSeconds };
}
