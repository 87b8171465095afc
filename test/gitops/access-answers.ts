/**
 * A plan's access change held against the server's own answers: every identity's key asks a
 * SelfSubjectAccessReview for every question before and after the apply; each answer that moved
 * must be a gain or loss of the plan (that identity, that verb, an object answering the question),
 * and each gain or loss of the plan must move some answer that asks about its object.
 */
import type { OwnedAccessKey } from '../../src/api/types.js';
import type { AccessChange, AccessEntry } from '../../src/gitops/plan/access-change.js';
import { inBatches, objectsFor, questions, serverSays, type Question, type Served } from '../review/review-world.js';

/** A key to ask with, and the identity of the plan whose lines answer for it. */
export interface Asker {
  keyName: string;
  value: string;
  identity: string;
  /** Whose own keys a create by it is (access-review objectsFor). */
  owner: { kind: 'user' | 'team' | 'group' | 'subject' | 'key'; name: string };
}

export type Answers = Map<string, boolean>;

const qText = (q: Question) => `${q.verb} ${q.resource}/${q.name ?? '*'}`;

/** Every asker's answer to every question; a key that does not authenticate may do nothing. */
export async function answers(s: Served, askers: Asker[], keys: OwnedAccessKey[], extraTeams: string[] = []): Promise<Answers> {
  const qs = questions(keys);
  for (const name of extraTeams) for (const verb of ['get', 'list', 'watch', 'update', 'patch', 'delete']) qs.push({ verb, resource: 'teams', name });
  const asked = askers.flatMap((a) => qs.map((q) => ({ a, q })));
  const out: Answers = new Map();
  await inBatches(asked, 24, async ({ a, q }) => out.set(`${a.keyName}|${qText(q)}`, (await serverSays(s, a.value, q)) ?? false));
  return out;
}

/** What disagrees between the plan's change and the answers that moved (empty: they agree). */
export function disagreements(change: AccessChange, askers: Asker[], before: Answers, after: Answers, keys: Map<string, OwnedAccessKey>, goneKeys: ReadonlySet<string> = new Set()): string[] {
  const out: string[] = [];
  const entries = (list: AccessEntry[], identity: string) => list.filter((e) => e.identity === identity && e.resource !== 'clusterroles');
  const witnessed = new Set<AccessEntry>();
  for (const a of askers) {
    for (const [k, was] of before) {
      if (!k.startsWith(`${a.keyName}|`)) continue;
      const now = after.get(k);
      const [verb, target] = k.slice(a.keyName.length + 1).split(' ') as [string, string];
      const [resource, name] = [target.slice(0, target.indexOf('/')), target.slice(target.indexOf('/') + 1)] as ['teams' | 'ownedaccesskeys', string];
      const q: Question = { verb, resource, ...(name !== '*' ? { name } : {}) };
      const objects = objectsFor(q, a.owner as never, keys);
      // The open list answers for the collection only (review-world reviewSays), never for an object by name.
      const speaks = (e: AccessEntry) => !(q.name && e.via.length > 0 && e.via.every((v) => v === 'the open list'));
      const matching = (list: AccessEntry[]) => entries(list, a.identity).filter((e) => e.verb === verb && objects.includes(e.object) && speaks(e));
      if (now === undefined || was === now) continue;
      // A key deleted with its team: the object is gone, no one's right to it moved.
      if (resource === 'ownedaccesskeys' && goneKeys.has(name)) continue;
      const lines = matching(now ? change.gains : change.losses);
      lines.forEach((e) => witnessed.add(e));
      if (lines.length === 0) out.push(`${a.keyName} (${a.identity}): can-i ${verb} ${target} went ${was} -> ${now}, the plan lists no ${now ? 'gain' : 'loss'} for it`);
    }
  }
  // Every line of an asked identity moved some answer (when some question asks about its object).
  const asks = new Set(askers.map((a) => a.identity));
  for (const e of [...change.gains, ...change.losses]) {
    if (!asks.has(e.identity) || e.resource === 'clusterroles' || witnessed.has(e)) continue;
    // A create of a key is asked without its content and judged as one of the asker's own, which a
    // user may always create: no answer can show a right to create everyone's keys come or go.
    if (e.verb === 'create' && e.object === 'ownedaccesskeys/*') continue;
    // The keys of a team (or user) all deleted with it, or of every team (`*`): no key by name answers for them all.
    const whose = /^ownedaccesskeys\[(team|user)=(.+)\]$/.exec(e.object);
    if (whose && ![...keys.values()].some((k) => k.spec?.[whose[1] as 'team' | 'user'] === whose[2] && !goneKeys.has(k.metadata.name!))) continue;
    out.push(`the plan lists ${change.gains.includes(e) ? 'a gain' : 'a loss'} no answer shows: ${e.identity} ${e.verb} ${e.object} (via ${e.via.join('; ')})`);
  }
  return out;
}
