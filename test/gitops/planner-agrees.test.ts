/**
 * The planner's ownership model against the server's: for generated Teams written by gitops and
 * then edited by other managers through the real registry (merge patches), the plan's verdict per
 * field (whether it changes, drift, lastChangedBy.manager) is what the stored object's values and
 * managedFields say. The planner is a fast client-side mirror of server-side apply; this is the
 * proof that the mirror and the original agree, on scalar fields (ownership decides drift) and on
 * spec.users (an access field: git's whole value, items owned one by one).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { resourceModels } from '../../src/api/model.js';
import type { KubeObject, ManagedFieldsEntry } from '../../src/api/types.js';
import { gitopsManager } from '../../src/client/types.js';
import { planObject, withSource, type PlanOptions } from '../../src/gitops/plan/plan.js';
import type { DesiredObject } from '../../src/gitops/validate.js';
import { newRegistry, team } from '../registry/helpers.js';

const models = resourceModels();
const opts: PlanOptions = { sourceId: 's', prune: false, allowEmpty: false, maxPrune: 10 };
const manifest = { file: 'x.yaml', line: 1, column: 1, object: {}, locate: () => ({ file: 'x.yaml', line: 1, column: 1 }) };
/** The non-authoritative scalar fields of a Team: ownership decides whether a difference is drift. */
const fields = ['displayName', 'description', 'username'] as const;
type Field = (typeof fields)[number];

const value = fc.constantFrom('a', 'b', 'c');
/** spec.users: an access field (git's whole value), a set list whose items are owned one by one. */
const users = fc.uniqueArray(fc.constantFrom('ann', 'bob', 'mal'), { maxLength: 3 });
const spec = fc.record({ displayName: value, description: value, username: value, users }, { requiredKeys: [] });
/** One edit: a merge patch by another manager setting (a value) or removing (null) some fields. */
const edit = fc.record({
  manager: fc.constantFrom('kubectl-edit', 'kubectl-patch'),
  set: fc.record({ displayName: fc.option(value, { nil: null }), description: fc.option(value, { nil: null }), username: fc.option(value, { nil: null }), users }, { requiredKeys: [] }),
});

/** The manager whose managedFields entry holds spec.<field>, as the server recorded it. */
function ownerOf(entries: ManagedFieldsEntry[], field: Field): string | undefined {
  return entries.find((e) => (e.fieldsV1 as { 'f:spec'?: Record<string, unknown> } | undefined)?.['f:spec']?.[`f:${field}`] !== undefined)?.manager;
}

/** The managers owning an item of spec.users (or, with no user, the list itself) as the server recorded them; gitops left out. */
function userOwners(entries: ManagedFieldsEntry[], user: string | undefined): string[] {
  const key = user === undefined ? '.' : `v:${JSON.stringify(user)}`;
  const holds = (e: ManagedFieldsEntry) => (e.fieldsV1 as { 'f:spec'?: { 'f:users'?: Record<string, unknown> } } | undefined)?.['f:spec']?.['f:users']?.[key] !== undefined;
  return entries.filter((e) => e.manager !== gitopsManager && holds(e)).flatMap((e) => (e.manager ? [e.manager] : []));
}

/** The latest manager other than gitops that wrote the object after gitops did, from managedFields. */
function laterWriter(entries: ManagedFieldsEntry[]): string | undefined {
  const gitops = entries.find((e) => e.manager === gitopsManager)?.time ?? '';
  return entries.filter((e) => e.manager !== gitopsManager && (e.time ?? '') >= gitops).sort((a, b) => (a.time ?? '').localeCompare(b.time ?? '')).at(-1)?.manager;
}

describe('the planner agrees with the server', () => {
  it('on which fields change, drift, and who last changed them', async () => {
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(spec, fc.array(edit, { minLength: 0, maxLength: 3 }), async (git, edits) => {
        fc.pre(edits.every((e) => Object.keys(e.set).length > 0));
        runs++;
        const { registry, clock } = newRegistry();
        const desired: DesiredObject = { plural: 'teams', obj: team('t', git) as KubeObject, manifest };
        await registry.teams.create(withSource(desired.obj, opts.sourceId), { fieldManager: gitopsManager });
        for (const e of edits) {
          clock.advance(1);
          await registry.teams.patch('t', 'merge', { spec: e.set }, { fieldManager: e.manager });
        }
        const live = await registry.teams.get('t');
        const stored = live.spec as Partial<Record<Field, string>> & { users?: string[] };
        const entries = live.metadata.managedFields ?? [];
        const action = planObject(models.teams, desired, live, opts);

        // Changes: exactly the fields git holds whose stored value differs.
        const differ = fields.filter((f) => git[f] !== undefined && stored[f] !== git[f]).map((f) => `spec.${f}`);
        // spec.users is git's whole value: any difference as a set is a change, git holding it or not,
        // and so is an empty list where git has none.
        const gitUsers: string[] = git.users ?? [];
        const added = (stored.users ?? []).filter((u) => !gitUsers.includes(u));
        const removed = gitUsers.filter((u) => !(stored.users ?? []).includes(u));
        if (added.length + removed.length > 0 || (git.users === undefined) !== (stored.users === undefined)) differ.push('spec.users');
        expect(action.changes.map((c) => c.path).sort()).toEqual(differ.sort());
        expect(action.type).toBe(differ.length === 0 ? 'unchanged' : 'update');
        for (const c of action.changes) {
          if (c.path === 'spec.users') {
            // A member added by hand: drift, named by a manager that owns an added member. Otherwise
            // (members removed, an empty list set): the writer after gitops, if managedFields still record one.
            if (added.length > 0) {
              expect(added.flatMap((u) => userOwners(entries, u))).toContain(c.lastChangedBy?.manager);
              expect(c.drift).toBe(true);
            } else if (userOwners(entries, undefined).length > 0) {
              // Another manager holds the list itself (it set it, empty or not): that manager.
              expect(userOwners(entries, undefined)).toContain(c.lastChangedBy?.manager);
              expect(c.drift).toBe(true);
            } else {
              expect(c.lastChangedBy?.manager).toBe(laterWriter(entries));
              expect(c.drift).toBe(laterWriter(entries) !== undefined);
            }
            continue;
          }
          const f = c.path.slice('spec.'.length) as Field;
          // A value someone set: its owner in managedFields; a value someone removed: the writer after gitops.
          const manager = stored[f] !== undefined ? ownerOf(entries, f) : laterWriter(entries);
          expect(c.lastChangedBy?.manager, `${c.path} in ${JSON.stringify(entries)}`).toBe(manager);
          expect(c.drift).toBe(manager !== undefined && manager !== gitopsManager);
        }
        expect(action.drift).toBe(action.changes.some((c) => c.drift));
      }),
      { numRuns: 150, interruptAfterTimeLimit: 15_000, seed: 18 },
    );
    expect(runs).toBeGreaterThan(20);
  }, 30_000);
});
