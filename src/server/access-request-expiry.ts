/**
 * Records the end of Active AccessRequests: phase Expired with an Expired condition, once their
 * expiresAt has passed. Authorization never waits for it (it checks expiresAt on every request,
 * auth/temporary-access.ts); this only makes the end visible, on the leader, every `intervalMs`.
 */
import type { Logger } from 'pino';
import { expired } from '../api/access-request.js';
import { ApiError } from '../api/errors.js';
import type { AccessRequest } from '../api/types.js';
import type { Registry } from '../registry/registry.js';
import { PeriodicRunner } from '../background/periodic-runner.js';

export class AccessRequestExpiry {
  readonly name = 'access-request-expiry';
  private readonly runner: PeriodicRunner<string[]>;

  constructor(
    private readonly registry: Registry,
    private readonly log: Logger,
    private readonly now: () => Date,
    intervalMs = 1000,
  ) {
    this.runner = new PeriodicRunner({ intervalMs, pass: () => this.sweep(), onError: (err) => this.log.warn({ err }, 'access request expiry sweep failed') });
  }

  start(): void {
    this.runner.start();
  }

  stop(): Promise<void> {
    return this.runner.stop();
  }

  /** Marks every Active request past its expiresAt Expired; returns their names. */
  async sweep(): Promise<string[]> {
    const r = this.registry.accessrequests;
    const ended: string[] = [];
    // The Active requests whose expiresAt has come, by the watch cache's time index: not every request.
    for (const obj of await r.dueBy('activeUntil', this.now().getTime())) {
      const req = obj as AccessRequest;
      if (!expired(req, this.now())) continue;
      try {
        // Recorded by this pass only if it wrote the end: a cache behind the store may show a request
        // already Expired as Active still, and its end is then neither reported nor logged again.
        let ends = false;
        await r.writeStatus(req.metadata.name!, (current) => {
          const end = expired(current as AccessRequest, this.now());
          ends = end !== undefined;
          return end ?? current.status;
        }, { fieldManager: 'teamkeys-access-expiry' });
        if (!ends) continue;
        ended.push(req.metadata.name!);
        this.log.info({ accessRequest: req.metadata.name, user: req.spec.user, team: req.spec.team }, 'access request expired');
      } catch (err) {
        if (!(err instanceof ApiError && err.code === 404)) throw err;
      }
    }
    return ended;
  }
}
