/**
 * The key a FederatedCredential mints, as one function: the token exchange mints it
 * (src/federation/mint.ts) and admission judges a rule by it (server/admission/escalation.ts), so a
 * rule can never mint a key its writer could not have created.
 */
import { federatedKeyType } from './key-types.js';
import type { FederatedCredential, OwnedAccessKey, OwnedAccessKeySpec } from './types.js';

/** The job a key was minted for, as people read it (audit, keys, whoami): repository, ref, workflow, run. */
export const jobAnnotation = 'federation.management.service/job';
/** The rule and its generation when the key was minted. */
export const ruleAnnotation = 'federation.management.service/rule';
/** The ruleAnnotation's value for a key minted by `rule` as it is: its name and generation. */
export const ruleStamp = (rule: Pick<FederatedCredential, 'metadata'>): string => `${rule.metadata.name ?? ''}@${rule.metadata.generation ?? 1}`;

/** The job a Federated key was minted for, if it is one. */
export const jobOf = (key: OwnedAccessKey): string | undefined => (key.spec.type === federatedKeyType ? key.metadata.annotations?.[jobAnnotation] : undefined);

/** A minted key's ttl when the rule names none. */
export const defaultFederatedTtlSeconds = 3600;

/** The spec of a key the rule mints (ttl aside: the exchange caps it by the job token's expiry). */
export function mintedKeySpec(rule: FederatedCredential): OwnedAccessKeySpec {
  const s = rule.spec;
  return {
    ...(s.team ? { team: s.team } : { user: s.user ?? '' }),
    ...(s.scope ? { scope: structuredClone(s.scope) } : {}),
    type: federatedKeyType,
    ttl: s.ttl ?? defaultFederatedTtlSeconds,
  };
}

/**
 * The key a rule stands for when its write is judged: created now, never expiring, because the rule
 * mints such keys for as long as it exists, whenever a job asks.
 */
export function keyJudgedForRule(rule: FederatedCredential): OwnedAccessKey {
  const { ttl: _ttl, ...spec } = mintedKeySpec(rule);
  return { apiVersion: rule.apiVersion, kind: 'OwnedAccessKey', metadata: { name: rule.metadata.name ?? '' }, spec };
}
