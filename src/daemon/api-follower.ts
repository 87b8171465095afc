/**
 * Watches both kinds on the API and says when an object this source manages changed in what git
 * describes (spec, labels, annotations), began deletion, or was deleted. Status writes (a key's
 * lastActivity) and managedFields-only writes change none of that, so they trigger nothing.
 */
import type { Logger } from 'pino';
import { servedPlurals } from '../api/resources.js';
import type { KubeObject } from '../api/types.js';
import type { ApiClient, ClientWatch, Plural } from '../client/types.js';
import { annotations } from '../gitops/plan/annotations.js';

/** What of an object git describes, and so what a reconcile could differ on. */
export function describedState(obj: KubeObject): string {
  const { labels, annotations: notes, deletionTimestamp } = obj.metadata;
  return JSON.stringify({ spec: obj.spec ?? null, labels: labels ?? {}, annotations: notes ?? {}, deleting: deletionTimestamp ?? null });
}

export interface ApiFollowerOptions {
  client: ApiClient;
  log: Logger;
  /** Whether an object carrying this source annotation is this source's (undefined: any annotated object is). */
  isManaged: (sourceId: string) => boolean;
  /** Called for a relevant change, or when a watch restarted and changes may have been missed. */
  onChange: (reason: string) => void;
}

export class ApiFollower {
  private stopped = false;
  private watches: ClientWatch[] = [];
  /** The described state of each managed object, by plural/name. */
  private readonly seen = new Map<string, string>();

  constructor(private readonly opts: ApiFollowerOptions) {}

  /** Which start the loops belong to: a loop of an earlier one (waiting on a list when the follower stopped and started again) ends. */
  private generation = 0;

  start(): void {
    this.stopped = false;
    const generation = ++this.generation;
    for (const plural of servedPlurals) void this.follow(plural, generation);
  }

  stop(): void {
    this.stopped = true;
    for (const w of this.watches) w.stop();
    this.watches = [];
  }

  private managed(obj: KubeObject): boolean {
    const id = obj.metadata.annotations?.[annotations.source];
    return id !== undefined && this.opts.isManaged(id);
  }

  private async follow(plural: Plural, generation: number): Promise<void> {
    const current = () => !this.stopped && generation === this.generation;
    for (let restarts = 0; current(); restarts++) {
      const watch = this.opts.client.watch(plural);
      this.watches.push(watch);
      try {
        // What exists now is the baseline, from scratch (what was deleted while the watch was down
        // is not kept); the watch starts after it.
        const listed = await this.opts.client.list(plural);
        if (!current()) break;
        for (const key of this.seen.keys()) if (key.startsWith(`${plural}/`)) this.seen.delete(key);
        for (const obj of listed) if (this.managed(obj)) this.seen.set(`${plural}/${obj.metadata.name}`, describedState(obj));
        // Events missed while the watch was down may have been changes.
        if (restarts > 0) this.opts.onChange(`the ${plural} watch restarted`);
        for await (const e of watch) this.consider(plural, e.type, e.object);
      } catch (err) {
        this.opts.log.debug({ err, plural }, 'API watch ended; restarting');
      } finally {
        // A watch whose list failed stays open otherwise, buffering until the server ends it (a review).
        watch.stop();
        this.watches = this.watches.filter((w) => w !== watch);
      }
      if (current()) await new Promise((r) => setTimeout(r, 1000));
    }
  }

  private consider(plural: Plural, type: string, obj: KubeObject): void {
    if (type !== 'ADDED' && type !== 'MODIFIED' && type !== 'DELETED') return;
    const key = `${plural}/${obj.metadata.name}`;
    const before = this.seen.get(key);
    if (type === 'DELETED' || !this.managed(obj)) {
      this.seen.delete(key);
      if (before !== undefined) this.opts.onChange(`${obj.kind}/${obj.metadata.name} ${type === 'DELETED' ? 'was deleted' : 'is no longer annotated as managed'} on the server`);
      return;
    }
    const now = describedState(obj);
    this.seen.set(key, now);
    // A new object carrying this source's annotation is the reconciler's own create: a baseline, not a change.
    if (type === 'MODIFIED' && now !== before) this.opts.onChange(`${obj.kind}/${obj.metadata.name} changed on the server`);
  }
}
