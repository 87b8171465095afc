/**
 * The two worlds a plan's access change compares (plan/planned-state.ts): what each writing action
 * leaves of its object. Found by `npm run test:mutation`: mutants of these rules survived.
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/types.js';
import type { Plan, PlanStep } from '../../src/gitops/plan/plan.js';
import { plannedObjects } from '../../src/gitops/plan/planned-state.js';

const v1 = 'management.service/v1';
const team = (name: string, users: string[]): KubeObject => ({ apiVersion: v1, kind: 'Team', metadata: { name, resourceVersion: '5' }, spec: { users } });
const step = (type: PlanStep['type'], name: string, extra: Partial<PlanStep> = {}): PlanStep => ({ kind: 'Team', plural: 'teams', name, type, changes: [], drift: false, ...extra });
const live = { teams: [team('a', ['ana']), team('b', ['bo']), team('c', ['cy']), team('d', ['dee'])] };

const plan: Plan = {
  sourceId: 's',
  actions: [
    step('create', 'new', { body: team('new', ['nia']) }),
    step('update', 'a', { patch: [{ op: 'add', path: '/spec/users/-', value: 'mallory' }] }),
    step('replace', 'b', { body: team('b', []) }),
    step('delete', 'c'),
    step('unchanged', 'd'),
    step('skip', 'a2'),
  ],
};

describe('what a plan leaves live', () => {
  it('each write gives the object before and after it; unchanged and skipped objects are not asked about', () => {
    const teams = plannedObjects(plan, live).teams;
    expect([...teams.keys()]).toEqual(['new', 'a', 'b', 'c']);
    expect(teams.get('new')).toEqual({ before: undefined, after: team('new', ['nia']), created: true });
    expect(teams.get('a')).toEqual({ before: team('a', ['ana']), after: team('a', ['ana', 'mallory']), created: false });
    expect(teams.get('b')).toEqual({ before: team('b', ['bo']), after: team('b', []), created: false });
    expect(teams.get('c')).toEqual({ before: team('c', ['cy']), after: undefined, created: false });
    // The live object itself is left as it was (the patch applies to a copy).
    expect(live.teams[0]!.spec).toEqual({ users: ['ana'] });
  });

  it('a refused plan, or a kind the caller gave no live objects of, changes nothing', () => {
    expect(plannedObjects({ ...plan, refused: 'more than --max-prune deletions' }, live).teams.size).toBe(0);
    expect(plannedObjects(plan, {}).teams.size).toBe(0);
    expect(plannedObjects({ sourceId: 's', actions: [step('unchanged', 'd')] }, live).teams.size).toBe(0);
  });
});
