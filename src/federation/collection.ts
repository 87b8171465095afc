/** Background work on the leader: forgets, every 10 minutes, the single-use records of expired job tokens. */
import type { Logger } from 'pino';
import type { BackgroundWork } from '../server/background/leader.js';
import type { TokenExchange } from './exchange.js';

const intervalMs = 600_000;

export function tokenUsesCollection(exchange: TokenExchange, log: Logger): BackgroundWork {
  let timer: NodeJS.Timeout | undefined;
  const run = () =>
    void exchange.collectUses().then(
      (n) => n > 0 && log.info({ removed: n }, 'forgot the single-use records of expired job tokens'),
      (err: unknown) => log.warn({ err }, 'collecting the records of expired job tokens failed; will retry'),
    );
  return {
    name: 'token-uses',
    start: () => {
      timer = setInterval(run, intervalMs);
      timer.unref();
    },
    stop: () => clearInterval(timer),
  };
}
