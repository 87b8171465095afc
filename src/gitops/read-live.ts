/**
 * What a step reads from the API before it plans and writes: every kind's live objects, and the
 * audit trail of each object it would change. The writes are all in apply/.
 */
import type { AuditEvent } from '../api/audit-event.js';
import { isServerMintedKey } from '../api/key-types.js';
import { servedPlurals } from '../api/resources.js';
import type { KubeObject } from '../api/types.js';
import { ClientError, type ApiClient, type Plural } from '../client/types.js';
import { withTrail, type Drafted, type Plan } from './plan/plan.js';
import { pool } from './pool.js';

/** Audit trail reads in flight at once: enough to hide the round trips, few enough not to crowd the server. */
export const trailReadsInFlight = 8;

/**
 * Every kind's live objects, read at once (one round trip of waiting, not one per kind); a failure
 * reports the first kind's (teams), as a sequential read would. `allKeys` keeps the Login keys for
 * the key health section.
 */
export async function listLive(client: ApiClient): Promise<{ live: Record<Plural, KubeObject[]>; allKeys: KubeObject[] }> {
  const read = await Promise.allSettled(servedPlurals.map((p) => client.list(p)));
  const failed = read.find((r) => r.status === 'rejected');
  if (failed) throw failed.reason;
  const live = Object.fromEntries(servedPlurals.map((p, i) => [p, (read[i] as PromiseFulfilledResult<KubeObject[]>).value])) as Record<Plural, KubeObject[]>;
  const allKeys = live.ownedaccesskeys;
  // Keys the server mints (sign-in's, the token exchange's) are its own: never planned, pruned or reported as drift.
  return { live: { ...live, ownedaccesskeys: allKeys.filter((k) => !isServerMintedKey(k)) }, allKeys };
}

type TrailRead = { history: AuditEvent[] | undefined } | { failed: unknown };

/**
 * Names the changes of the objects the plan would change (update, replace) from their audit trails,
 * so a field someone removed is told from one git added and drift is named by person. The trail
 * serves one object per request, so the reads go concurrently, at most trailReadsInFlight at once,
 * and are joined in the plan's order. A server whose trail cannot be read leaves the plan as
 * managedFields made it, and the plan says why (never quietly: a report naming only
 * `kubectl-patch` where it could name a person must say it could not).
 */
export async function attributeFromTrail(client: ApiClient, plan: Plan, drafted: Drafted[], live: Record<Plural, KubeObject[]>): Promise<void> {
  const changing = [...plan.actions.keys()].filter((i) => plan.actions[i]!.type === 'update' || plan.actions[i]!.type === 'replace');
  const byName = new Map(servedPlurals.map((p) => [p, new Map(live[p].map((o) => [o.metadata.name!, o]))]));
  // After one read fails (a 403 answers every read alike), no new one is started.
  let stopped = false;
  const reads = await pool(changing, trailReadsInFlight, async (i): Promise<TrailRead | undefined> => {
    if (stopped) return undefined;
    const a = plan.actions[i]!;
    const uid = byName.get(a.plural)!.get(a.name)!.metadata.uid;
    try {
      const history = await client.auditEvents({ resource: a.plural, name: a.name, ...(uid ? { uid } : {}) });
      if (!history) stopped = true;
      return { history };
    } catch (failed) {
      stopped = true;
      return { failed };
    }
  });
  // In the plan's order, up to the first read that failed or found no trail, as one read after another would.
  for (const [n, i] of changing.entries()) {
    const read = reads[n];
    if (!read) return;
    if ('failed' in read) {
      if (!(read.failed instanceof ClientError)) throw read.failed;
      plan.attributionUnavailable = read.failed.message;
      return;
    }
    if (!read.history) return;
    plan.actions[i] = withTrail(drafted[i]!, read.history);
  }
}
