/**
 * Background work on the leader: once each time it takes the lease, names the FederatedCredentials
 * the token exchange refuses because they were stored before a check their writes now meet
 * (`storedRuleRefusal`: a public issuer's rule pinning no owner). Such a rule stays stored and
 * writable (ratcheted), and a job using it hears why; this tells the operator before a job fails.
 */
import type { Logger } from 'pino';
import type { FederatedCredential } from '../api/types.js';
import type { Registry } from '../registry/registry.js';
import type { BackgroundWork } from '../server/background/leader.js';
import { storedRuleRefusal } from './exchange.js';

const pageSize = 500;

/**
 * The refused rules' names and reasons, read a page at a time from the watch cache; undefined when
 * `cancelled` says so between pages (the lease was lost: a store of many rules is not read to the end for nothing).
 */
export async function refusedStoredRules(registry: Registry, cancelled: () => boolean = () => false): Promise<{ name: string; reason: string }[] | undefined> {
  const refused: { name: string; reason: string }[] = [];
  let token: string | undefined;
  do {
    if (cancelled()) return undefined;
    const page = await registry.federatedcredentials.list({ limit: pageSize, ...(token ? { continue: token } : {}) });
    for (const rule of page.items as unknown as FederatedCredential[]) {
      const reason = storedRuleRefusal(rule);
      if (reason) refused.push({ name: rule.metadata.name!, reason });
    }
    token = page.metadata.continue || undefined;
  } while (token);
  return refused;
}

export function storedRulesCheck(registry: Registry, log: Logger): BackgroundWork {
  // Each start is one check; a stop, or a later start, cancels the one before (a lease lost and
  // taken again at once would otherwise log every rule twice).
  let current = 0;
  return {
    name: 'stored-federation-rules',
    start: () => {
      const check = ++current;
      const cancelled = () => check !== current;
      void refusedStoredRules(registry, cancelled).then(
        (refused) => {
          if (!refused || cancelled()) return;
          for (const r of refused) log.warn({ federatedCredential: r.name, reason: r.reason }, 'a stored FederatedCredential is not used by the token exchange until it is changed');
        },
        (err: unknown) => log.warn({ err }, 'could not check the stored FederatedCredentials'),
      );
    },
    stop: () => {
      current++;
    },
  };
}
