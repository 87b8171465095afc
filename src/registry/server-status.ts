/**
 * A status the server computes from the object as stored (an AccessRequest's approvals, phase and
 * expiry): written as a status write, inside the store's read-modify-write, so two approvals racing
 * on two replicas both count and none is lost.
 */
import type { KubeObject } from '../api/types.js';
import type { Admit } from './admission.js';
import { managerOf, present, type RegistryContext, type Writer } from './context.js';
import { runUpdate } from './update.js';

export interface ServerStatusOptions extends Writer {
  admit?: Admit;
  dryRun?: boolean;
  /** The subresource the audit trail names (the request's), when not status. */
  observedAs?: 'approval';
}

/** Writes `next(current)` as the status of `name`; an unchanged status writes nothing. */
export function writeServerStatus(ctx: RegistryContext, name: string, next: (current: KubeObject) => unknown, opts: ServerStatusOptions = {}): Promise<KubeObject> {
  return runUpdate(ctx, name, 'update', { ...opts, subresource: 'status', serverStatus: true }, (stored) => {
    const current = present(stored);
    return { obj: { ...current, status: next(current) }, fields: { kind: 'update', manager: managerOf(opts), reset: false, ...(opts.observedAs ? { subresource: opts.observedAs } : {}) } };
  });
}
