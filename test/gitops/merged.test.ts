/**
 * The two sides `teamkeys diff` shows (plan/merged.ts): LIVE and MERGED for each action that
 * writes, as kubectl diff compares them, managedFields left out of both. `npm run test:mutation`
 * found no in-process test reaching this file (only the CLI's diff tests did).
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/types.js';
import { mergedObjects } from '../../src/gitops/plan/merged.js';
import type { Plan, PlanStep } from '../../src/gitops/plan/plan.js';

const v1 = 'management.service/v1';
const managedFields = [{ manager: 'gitops', operation: 'Update' as const, apiVersion: v1, fieldsType: 'FieldsV1' as const, fieldsV1: {} }];
const team = (name: string, users: string[], withFields = true): KubeObject => ({
  apiVersion: v1,
  kind: 'Team',
  metadata: { name, resourceVersion: '5', ...(withFields ? { managedFields } : {}) },
  spec: { users },
});
const step = (type: PlanStep['type'], name: string, extra: Partial<PlanStep> = {}): PlanStep => ({ kind: 'Team', plural: 'teams', name, type, changes: [], drift: false, ...extra });
const live = { teams: [team('a', ['ana']), team('b', ['bo']), team('c', ['cy']), team('d', ['dee'])], ownedaccesskeys: [], federatedcredentials: [] };

describe('the two sides of teamkeys diff', () => {
  it('each write shows the object now and after it, without managedFields; unchanged and skipped objects are not shown', () => {
    const plan: Plan = {
      sourceId: 's',
      actions: [
        step('create', 'new', { body: team('new', ['nia'], false) }),
        step('update', 'a', { patch: [{ op: 'add', path: '/spec/users/-', value: 'mallory' }] }),
        step('replace', 'b', { body: team('b', [], false) }),
        step('delete', 'c'),
        step('unchanged', 'd'),
        step('skip', 'a'),
      ],
    };
    expect(mergedObjects(plan, live)).toEqual([
      { kind: 'Team', name: 'new', merged: team('new', ['nia'], false) },
      { kind: 'Team', name: 'a', live: team('a', ['ana'], false), merged: team('a', ['ana', 'mallory'], false) },
      { kind: 'Team', name: 'b', live: team('b', ['bo'], false), merged: team('b', [], false) },
      { kind: 'Team', name: 'c', live: team('c', ['cy'], false) },
    ]);
    // The live objects themselves keep their managedFields (the sides are copies).
    expect(live.teams[0]!.metadata.managedFields).toEqual(managedFields);
  });

  it('an update that rotates a key says where the new one goes, which no field shows', () => {
    const key: KubeObject = { apiVersion: v1, kind: 'OwnedAccessKey', metadata: { name: 'ci' }, spec: { team: 'a' } };
    const plan: Plan = { sourceId: 's', actions: [{ kind: 'OwnedAccessKey', plural: 'ownedaccesskeys', name: 'ci', type: 'update', patch: [], changes: [], drift: false, rotateKey: true, keySecret: 'github:o/r/KEY' }] };
    expect(mergedObjects(plan, { ...live, ownedaccesskeys: [key] })).toEqual([
      { kind: 'OwnedAccessKey', name: 'ci', live: key, merged: key, note: 'apply rotates its key and delivers the new one to github:o/r/KEY' },
    ]);
  });
});
