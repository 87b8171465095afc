/** Background work on the leader: forgets, every 10 minutes, the single-use records of expired job tokens. */
import type { Logger } from 'pino';
import type { BackgroundWork } from '../server/background/leader.js';
import type { Store } from '../store/types.js';
import type { TokenExchange } from './exchange.js';
import { PeriodicRunner } from '../background/periodic-runner.js';

const intervalMs = 600_000;

/** `store`: the leader's fenced view (the registry's `fencedBy`), so a replica that lost the lease deletes nothing. */
export function tokenUsesCollection(exchange: TokenExchange, store: Store, log: Logger): BackgroundWork {
  const runner = new PeriodicRunner({
    intervalMs,
    pass: async () => {
      const n = await exchange.collectUses(store);
      if (n > 0) log.info({ removed: n }, 'forgot the single-use records of expired job tokens');
    },
    onError: (err) => log.warn({ err }, 'collecting the records of expired job tokens failed; will retry'),
  });
  return { name: 'token-uses', start: () => runner.start(), stop: () => runner.stop() };
}
