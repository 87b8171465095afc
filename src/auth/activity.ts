/**
 * Records when each key was last used: remembered at once in memory (for ttlAfterLastActivity on
 * this server), written to status.lastActivity at most once per interval per key, off the request path.
 */
import type { Logger } from 'pino';
import type { ResourceRegistry } from '../registry/resource-registry.js';

export class ActivityRecorder {
  private readonly lastUse = new Map<string, number>();
  private readonly lastWrite = new Map<string, number>();

  constructor(
    private readonly keys: ResourceRegistry,
    private readonly intervalMs: number,
    private readonly log: Logger,
  ) {}

  touch(name: string, now: Date): void {
    const ms = now.getTime();
    this.lastUse.set(name, ms);
    if (ms - (this.lastWrite.get(name) ?? 0) < this.intervalMs) return;
    this.lastWrite.set(name, ms);
    const lastActivity = now.toISOString().replace(/\.\d{3}Z$/, 'Z');
    void this.keys.patch(name, 'merge', { status: { lastActivity } }, { subresource: 'status', fieldManager: 'teamkeys-activity' }).catch((err: unknown) => {
      this.log.debug({ err, key: name }, 'could not record key activity');
    });
  }

  lastUsed(name: string): number | undefined {
    return this.lastUse.get(name);
  }

  forget(name: string): void {
    this.lastUse.delete(name);
    this.lastWrite.delete(name);
  }
}
