/**
 * The plan's access change against the server's answers, in random worlds of the escalation model
 * (test/auth/model/world.ts): a plan replacing some Teams' specs, changing some keys and deleting
 * a Team is computed over the live objects, applied as the reconciler writes an update (a JSON patch of the spec; no resourceVersion guard, since the answers asked record key use), and every
 * identity's SelfSubjectAccessReview answers before and after must differ by exactly the plan's
 * gains and losses.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyMergePatch } from '../../src/api/patch.js';
import type { KubeObject, OwnedAccessKey, Team } from '../../src/api/types.js';
import { accessChange } from '../../src/gitops/plan/access-change.js';
import { isOwnIdentity } from '../../src/gitops/plan/access-identities.js';
import type { Plan, PlanStep } from '../../src/gitops/plan/plan.js';
import { groups, teamField, world } from '../auth/model/world.js';
import { serveWorld, type Served } from '../review/review-world.js';
import { answers, disagreements, type Asker } from './access-answers.js';

const keyChange = fc.oneof(
  fc.constant({ scope: null }),
  fc.constant({ scope: { roles: [{ role: 'cli' }] } }),
  fc.constant({ scope: { rules: [{ verbs: ['get', 'update'], resources: [{ group: 'management.service', resources: ['teams'] }] }] } }),
  fc.constant({ disabled: true }),
  fc.constantFrom(...groups).map((g) => ({ groups: [g] })),
);
const changes = fc.record({
  teams: fc.array(fc.record({ pick: fc.nat(9), field: teamField }), { minLength: 1, maxLength: 3 }),
  keys: fc.array(fc.record({ pick: fc.nat(9), spec: keyChange }), { maxLength: 2 }),
  deleteTeam: fc.option(fc.nat(9), { freq: 4 }),
});

async function list<T>(s: Served, plural: string): Promise<T[]> {
  return ((await (await s.server.fetch(`${s.server.api}/${plural}`)).json()) as { items: T[] }).items;
}

const step = (o: KubeObject, plural: 'teams' | 'ownedaccesskeys', type: 'replace' | 'delete', body?: KubeObject): PlanStep =>
  ({ kind: o.kind, plural, name: o.metadata.name!, type, changes: [], drift: false, ...(body ? { body } : {}) }) as PlanStep;

/** A key of every identity the plan speaks of, and the identity whose lines answer for it. */
function askersOf(s: Served, keys: OwnedAccessKey[], planned: Map<string, KubeObject>): Asker[] {
  const out: Asker[] = [];
  for (const k of keys) {
    const value = s.values.get(k.metadata.name!);
    const name = k.metadata.name!;
    if (!value) continue;
    const spec = k.spec ?? {};
    if (name.startsWith('probe-user-')) out.push({ keyName: name, value, identity: `user:${spec.user}`, owner: { kind: 'user', name: spec.user! } });
    else if (name.startsWith('probe-group-')) out.push({ keyName: name, value, identity: `group:${spec.groups![0]}`, owner: { kind: 'subject', name: spec.subject! } });
    else if (isOwnIdentity(k) || isOwnIdentity(planned.get(`key/${name}`) as OwnedAccessKey | undefined)) out.push({ keyName: name, value, identity: `key:${name}`, owner: spec.team ? { kind: 'team', name: spec.team } : spec.user ? { kind: 'user', name: spec.user } : { kind: 'subject', name: spec.subject ?? '' } });
    // A plain key the plan changes (disabled, say) is its user's, and the plan speaks of its user: not asked.
    else if (spec.user && !planned.has(`key/${name}`)) out.push({ keyName: name, value, identity: `user:${spec.user}`, owner: { kind: 'user', name: spec.user } });
  }
  return out;
}

describe('the access change of a plan agrees with the authorizer (model-based)', () => {
  it('in random worlds, what each identity can-i answers before and after the apply differs by exactly the plan\'s gains and losses', async () => {
    let runs = 0;
    const deadline = Date.now() + Number(process.env.ACCESS_CHANGE_MS ?? 15_000);
    await fc.assert(
      fc.asyncProperty(world, changes, async (w, c) => {
        if (runs >= 2 && Date.now() > deadline) return;
        runs++;
        const s = await serveWorld(w.teams, w.keys);
        try {
          const teams = await list<Team>(s, 'teams');
          const keys = await list<OwnedAccessKey>(s, 'ownedaccesskeys');
          // The world's teams only: the administrator's own team (admins) stays as it is.
          const worldTeams = teams.filter((t) => t.metadata.name !== 'admins');
          const actions: PlanStep[] = [];
          const replaced = new Map<string, KubeObject>();
          for (const t of c.teams) {
            const live = worldTeams[t.pick % worldTeams.length]!;
            const now = (replaced.get(live.metadata.name!) ?? live) as KubeObject;
            replaced.set(live.metadata.name!, applyMergePatch(now, { spec: t.field }) as KubeObject);
          }
          const worldKeys = keys.filter((k) => /^k\d$/.test(k.metadata.name!));
          for (const k of c.keys) {
            if (worldKeys.length === 0) break;
            const live = worldKeys[k.pick % worldKeys.length]!;
            replaced.set(`key/${live.metadata.name}`, applyMergePatch(live, { spec: k.spec }) as KubeObject);
          }
          const gone = c.deleteTeam === null ? undefined : worldTeams[c.deleteTeam % worldTeams.length]!;
          for (const [name, body] of replaced) {
            if (name.startsWith('key/')) actions.push(step(body, 'ownedaccesskeys', 'replace', body));
            else if (name !== gone?.metadata.name) actions.push(step(body, 'teams', 'replace', body));
          }
          if (gone) actions.push(step(gone, 'teams', 'delete'));
          const plan: Plan = { sourceId: 'model', actions };
          const change = accessChange({ teams, keys, plan, group: 'management.service', now: new Date() });

          const askers = askersOf(s, keys, replaced);
          const before = await answers(s, askers, keys);
          for (const a of actions) {
            const path = `${s.server.api}/${a.plural}/${a.name}`;
            const res = a.type === 'delete' ? await s.server.fetch(path, { method: 'DELETE' }) : await s.server.fetch(path, { method: 'PATCH', headers: { 'Content-Type': 'application/json-patch+json' }, body: JSON.stringify([{ op: 'replace', path: '/spec', value: a.body!.spec }]) });
            expect(res.status, `${a.type} ${a.plural}/${a.name}: ${await res.clone().text()}`).toBeLessThan(300);
          }
          const after = await answers(s, askers, keys);
          const left = new Set((await list<OwnedAccessKey>(s, 'ownedaccesskeys')).filter((k) => !k.metadata.deletionTimestamp).map((k) => k.metadata.name!));
          const goneKeys = new Set(keys.map((k) => k.metadata.name!).filter((n) => !left.has(n)));
          const wrong = disagreements(change, askers, before, after, new Map(keys.map((k) => [k.metadata.name!, k])), goneKeys);
          expect(wrong, JSON.stringify({ world: w, changes: c, gains: change.gains.length, losses: change.losses.length })).toEqual([]);
        } finally {
          await s.close();
        }
      }),
      { numRuns: Number(process.env.ACCESS_CHANGE_RUNS ?? 8), ...(process.env.TEAMKEYS_TEST_SEED ? { seed: Number(process.env.TEAMKEYS_TEST_SEED) } : {}) },
    );
    expect(runs).toBeGreaterThanOrEqual(2);
  }, Number(process.env.ACCESS_CHANGE_MS ?? 15_000) + 90_000);
});
