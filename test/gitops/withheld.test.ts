/** Which change paths a manifest names, for pull-request mode's withheld live values (plan/withheld.ts). */
import { describe, expect, it } from 'vitest';
import type { PlanStep } from '../../src/gitops/plan/plan.js';
import { holdsPath, withholdUnnamed } from '../../src/gitops/plan/withheld.js';

const manifest = { metadata: { name: 'finance', labels: { 'app.kubernetes.io/name': 'x' }, annotations: {} }, spec: { users: ['ana'], owner: { team: 'a' } } };

describe('fields a manifest names', () => {
  it.each([
    ['spec.users', true],
    ['spec.owner', true],
    ['spec.owner.team', true],
    ['metadata.labels.app.kubernetes.io/name', true],
    ['metadata.labels.cost', false],
    ['metadata.annotations.gitops.management.service/source', false],
    ['spec.description', false],
    ['spec.groups', false],
    ['spec', true],
    // The empty path is the whole object.
    ['', true],
    // A list's items are no fields of their own.
    ['spec.users.0', false],
  ])('%s -> %s', (path, named) => {
    expect(holdsPath(manifest, path)).toBe(named);
  });

  it('the empty path names nothing of no object', () => {
    expect(holdsPath(undefined, '')).toBe(false);
  });

  it('a change to a field the manifest does not name keeps its path and drift, and loses its values and writer', () => {
    const action: PlanStep = {
      kind: 'Team',
      plural: 'teams',
      name: 'finance',
      type: 'replace',
      drift: true,
      changes: [
        { path: 'spec.users', before: ['fiona'], after: ['ana'], drift: true, description: 'added `"fiona"` to spec.users', lastChangedBy: { manager: 'kubectl', operation: 'Update', user: 'olga' } },
        { path: 'spec.description', before: 'Payroll', drift: true, description: 'added spec.description', lastChangedBy: { manager: 'kubectl', operation: 'Update', user: 'olga' } },
      ],
    };
    expect(withholdUnnamed(action, manifest).changes).toEqual([action.changes[0], { path: 'spec.description', drift: true, withheld: true }]);
    expect(withholdUnnamed({ ...action, type: 'create' }, {}).changes).toBe(action.changes);
  });

  it.each(['update', 'replace', 'skip'] as const)('a %s shows the live value of named fields only', (type) => {
    const step: PlanStep = { kind: 'Team', plural: 'teams', name: 'finance', type, drift: true, changes: [{ path: 'spec.description', before: 'Payroll', drift: true }] };
    expect(withholdUnnamed(step, manifest).changes).toEqual([{ path: 'spec.description', drift: true, withheld: true }]);
  });

  it.each(['create', 'delete', 'unchanged'] as const)('a %s shows no live value, so it is left as planned', (type) => {
    const step: PlanStep = { kind: 'Team', plural: 'teams', name: 'finance', type, drift: false, changes: [{ path: 'spec.description', after: 'Payroll', drift: false }] };
    expect(withholdUnnamed(step, manifest)).toEqual(step);
  });
});

describe('what a pull request is told of a planned rotation and of a skip', () => {
  const key: PlanStep = { kind: 'OwnedAccessKey', plural: 'ownedaccesskeys', name: 'ci', type: 'unchanged', changes: [], drift: false };
  const rotation = { sink: 'github:o/r/KEY', rotateEvery: '30d', overlap: '6h', overlapSeconds: 21600, ageSeconds: 3_000_000 };

  it.each([
    ['due', 'due'],
    ['unconfirmed', 'due'],
    ['unrecorded', 'due'],
    ['moved', 'moved'],
  ] as const)('a rotation planned as %s reads as %s, without the value age', (reason, shown) => {
    expect(withholdUnnamed({ ...key, rotation: { ...rotation, reason } }, {}).rotation).toEqual({
      sink: 'github:o/r/KEY',
      rotateEvery: '30d',
      overlap: '6h',
      overlapSeconds: 21600,
      reason: shown,
      withheld: true,
    });
  });

  it("a skip quoting another source's id reads the withheld reason instead", () => {
    const skip: PlanStep = { ...key, type: 'skip', reason: 'managed by another source (payroll-repo)', reasonWithheld: 'managed by another source (which one is not shown in a pull request)' };
    const shown = withholdUnnamed(skip, {});
    expect(shown.reason).toBe('managed by another source (which one is not shown in a pull request)');
    expect(JSON.stringify(shown)).not.toContain('payroll-repo');
    expect(withholdUnnamed({ ...key, type: 'skip', reason: 'not managed by this source' }, {}).reason).toBe('not managed by this source');
  });
});
