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
  ])('%s -> %s', (path, named) => {
    expect(holdsPath(manifest, path)).toBe(named);
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
});
