/**
 * The LISTEN connection of the PostgreSQL backend. It wakes this replica's watchers as soon as
 * another replica writes; when it drops (database restarted, pg_terminate_backend, network) it
 * reconnects with backoff and then has the log read again from the last revision delivered, so
 * the writes made while it was away reach the watchers in order, none twice. Meanwhile the
 * watchers' poll keeps them going, only later.
 */
import pg from 'pg';
import type { StoreLog } from '../types.js';

const firstRetryMs = 100;
const maxRetryMs = 5_000;

export class NotificationListener {
  private client: pg.Client | undefined;
  private closed = false;
  private wake: (() => void) | undefined;

  /** @param onWake called for every notification and after every (re)connection. */
  constructor(
    private readonly config: pg.ClientConfig,
    private readonly channel: string,
    private readonly onWake: () => void,
    private readonly log: StoreLog,
  ) {
    void this.run();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.wake?.();
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.closed) {
      try {
        const { lost } = await this.connect();
        if (failures > 0) this.log.info({ failedAttempts: failures }, 'PostgreSQL notification listener reconnected; reading the log from the last revision delivered');
        failures = 0;
        const err = await lost;
        if (this.closed) return;
        this.log.warn({ err }, 'PostgreSQL notification listener lost its connection; reconnecting (watchers poll meanwhile)');
      } catch (err) {
        if (this.closed) return;
        failures++;
        this.log.warn({ err, failedAttempts: failures }, 'PostgreSQL notification listener could not connect; retrying');
      }
      await this.sleep(failures === 0 ? 0 : Math.min(maxRetryMs, firstRetryMs * 2 ** (failures - 1)));
    }
  }

  /** Connects and LISTENs; `lost` settles with the error that ends the connection. */
  private async connect(): Promise<{ lost: Promise<unknown> }> {
    const client = new pg.Client(this.config);
    const lost = new Promise<unknown>((resolve) => {
      client.on('error', resolve);
      client.on('end', () => resolve(new Error('the connection ended')));
    });
    client.on('notification', () => this.onWake());
    try {
      await client.connect();
      await client.query(`LISTEN ${this.channel}`);
    } catch (err) {
      await client.end().catch(() => {});
      throw err;
    }
    if (this.closed) {
      await client.end().catch(() => {});
      return { lost: Promise.resolve(undefined) };
    }
    this.client = client;
    // Writes made while no listener was connected sent notifications nobody heard.
    this.onWake();
    return {
      lost: lost.finally(() => {
        if (this.client === client) this.client = undefined;
        void client.end().catch(() => {});
      }),
    };
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      timer.unref();
      this.wake = done;
      function done() {
        clearTimeout(timer);
        resolve();
      }
    });
  }
}
