/**
 * An OwnedAccessKey git declares that already exists on the server, not managed by this source, is
 * adopted by the first apply: its value stays, and whoever created the key knows it. Adopting it
 * for another holder (git names another user, team or subject) would hand that value the new
 * holder's rights: a user who created `deploy-prod` for themselves, before git's key of that name
 * for team prod was first applied, would act for team prod (found by a review). Such a manifest is
 * an error at its holder's file:line; deleting the live key lets apply create it with a new value.
 * Adopting a key for the holder it has (`teamkeys import`, then apply) changes no one's rights.
 */
import type { KubeObject } from '../api/types.js';
import { annotations } from './plan/annotations.js';
import type { ManifestError } from './source/manifests.js';
import type { DesiredObject } from './validate.js';

const holderFields = ['user', 'team', 'subject'] as const;

/** Who a key acts for, as its manifest or live object says. */
function holderOf(obj: KubeObject): string {
  const spec = (obj.spec ?? {}) as Record<string, unknown>;
  const parts = holderFields.filter((f) => spec[f] !== undefined).map((f) => `${f} ${JSON.stringify(spec[f])}`);
  return parts.length > 0 ? parts.join(', ') : 'no one';
}

export function adoptedKeyHolders(desired: DesiredObject[], liveKeys: KubeObject[], sourceId: string, formerIds: readonly string[] = []): ManifestError[] {
  const live = new Map(liveKeys.map((k) => [k.metadata.name!, k]));
  const errors: ManifestError[] = [];
  for (const d of desired) {
    if (d.plural !== 'ownedaccesskeys') continue;
    const current = live.get(d.obj.metadata.name!);
    if (!current || current.metadata.deletionTimestamp) continue;
    const managedBy = current.metadata.annotations?.[annotations.source];
    // This source's key (or one it managed under an id it had before): a holder change is a change git reviews.
    if (managedBy !== undefined && (managedBy === sourceId || formerIds.includes(managedBy))) continue;
    // Another source's key is skipped by the plan, never written.
    if (managedBy !== undefined) continue;
    const was = holderOf(current);
    const wanted = holderOf(d.obj);
    if (was === wanted) continue;
    const field = holderFields.find((f) => (d.obj.spec as Record<string, unknown> | undefined)?.[f] !== undefined);
    errors.push({
      ...d.manifest.locate(field ? `spec.${field}` : 'spec'),
      message: `OwnedAccessKey "${d.obj.metadata.name}" exists on the server for ${was}, not managed by this source: adopting it for ${wanted} would give its value, which its creator knows, ${wanted === 'no one' ? 'to no one it names' : "that holder's rights"}. Delete the key on the server (apply then creates it with a new value) or give it another name in git`,
    });
  }
  return errors;
}
