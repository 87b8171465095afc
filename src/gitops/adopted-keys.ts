/**
 * An OwnedAccessKey git declares that already exists on the server keeps its value when apply
 * writes it, and whoever held the key knows that value. Giving the key another holder (git names
 * another user, team or subject than the live key has) would hand that value the new holder's
 * rights: a user who created `deploy-prod` for themselves before git's key of that name for team
 * prod was first applied would act for team prod (found by a review). Such a manifest is an error
 * at its holder's file:line; deleting the live key lets apply create it with a new value. This
 * holds for a key carrying this source's annotation too: anyone may put it on a key of their own,
 * so it proves nothing about who set the value (a second review squatted a key that way). Keeping
 * the holder it has (`teamkeys import`, then apply) changes no one's rights.
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

/**
 * The manifests that would give a live key another holder, as errors. `withhold` (pull-request
 * mode): the live holder is not named, since a pull request could name any
 * key with a wrong holder to learn who holds it; the error still says the holders differ.
 */
export function adoptedKeyHolders(desired: DesiredObject[], liveKeys: KubeObject[], sourceId: string, formerIds: readonly string[] = [], withhold = false): ManifestError[] {
  const live = new Map(liveKeys.map((k) => [k.metadata.name!, k]));
  const errors: ManifestError[] = [];
  for (const d of desired) {
    if (d.plural !== 'ownedaccesskeys') continue;
    const current = live.get(d.obj.metadata.name!);
    if (!current || current.metadata.deletionTimestamp) continue;
    const managedBy = current.metadata.annotations?.[annotations.source];
    // Another source's key is skipped by the plan, never written. This source's own annotation proves
    // nothing: anyone may put it on a key of their own (a review squatted a key that way).
    if (managedBy !== undefined && managedBy !== sourceId && !formerIds.includes(managedBy)) continue;
    const was = holderOf(current);
    const wanted = holderOf(d.obj);
    if (was === wanted) continue;
    const field = holderFields.find((f) => (d.obj.spec as Record<string, unknown> | undefined)?.[f] !== undefined);
    errors.push({
      ...d.manifest.locate(field ? `spec.${field}` : 'spec'),
      message: `OwnedAccessKey "${d.obj.metadata.name}" acts for ${withhold ? 'another holder (which one is not shown in a pull request)' : was} on the server: giving it to ${wanted} would keep its value, which whoever held it knows, and give that value ${wanted === 'no one' ? 'to no one it names' : "the new holder's rights"}. Delete the key on the server (apply then creates it with a new value) or give it another name in git`,
    });
  }
  return errors;
}
