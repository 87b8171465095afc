/** Builds the sync daemon (teamkeys watch, the serve sidecar): apart from daemon-setup.ts so the flags load no file watcher or metrics. */
import type { Logger } from 'pino';
import type { ApiClient } from '../client/types.js';
import { CountingClient } from '../daemon/counting-client.js';
import { SyncDaemon, type DaemonOptions } from '../daemon/daemon.js';
import { DaemonMetrics } from '../daemon/metrics.js';
import type { DaemonConfig } from './daemon-setup.js';
import { loadCycleModules } from '../gitops/reconcile.js';

/** The daemon and its metrics, writing through `client` (counted by verb and code), with every module its cycles use loaded. */
export async function buildDaemon(config: DaemonConfig, client: ApiClient, log: Logger, onCycle?: DaemonOptions['onCycle']): Promise<{ daemon: SyncDaemon; metrics: DaemonMetrics; client: CountingClient }> {
  await loadCycleModules(config);
  const metrics = new DaemonMetrics();
  const counted = new CountingClient(client, metrics);
  const { webhookSecret: _secret, ...options } = config;
  const daemon = new SyncDaemon({ ...options, client: counted, metrics, log, ...(onCycle ? { onCycle } : {}) });
  return { daemon, metrics, client: counted };
}
