/**
 * The ignore-fields annotation's two limits, table-driven on the pure rule (plan/ignore-fields.ts):
 * what an entry hides from diff and write, that the reconciler's own annotations are never hidden
 * (not even by `metadata.annotations`), and that an entry hiding a field which defines access is
 * named with that field, as validate refuses it. Found by `npm run test:mutation`: mutants of these
 * rules survived the scenario tests.
 */
import { describe, expect, it } from 'vitest';
import { resourceModels } from '../../src/api/model.js';
import type { KubeObject } from '../../src/api/types.js';
import { accessFieldsIgnored, ignoredFields, ignoreFieldsList } from '../../src/gitops/plan/ignore-fields.js';
import { renderMarkdown } from '../../src/gitops/report/markdown.js';
import type { Report } from '../../src/gitops/report/report.js';

const team = (ignore: unknown): KubeObject =>
  ({ apiVersion: 'management.service/v1', kind: 'Team', metadata: { name: 't', annotations: { 'gitops.management.service/ignore-fields': ignore } }, spec: {} }) as KubeObject;

describe('the ignore-fields annotation', () => {
  it('lists its entries trimmed, skipping empty ones; anything but a string is no list', () => {
    expect(ignoreFieldsList(team(' spec.description , ,metadata.labels.cost,'))).toEqual(['spec.description', 'metadata.labels.cost']);
    expect(ignoreFieldsList(team(['spec.description']))).toEqual([]);
    expect(ignoreFieldsList(undefined)).toEqual([]);
    // Read before the schema is checked: an object without metadata has none either.
    expect(ignoreFieldsList({ apiVersion: 'management.service/v1', kind: 'Team' } as KubeObject)).toEqual([]);
  });

  const ignored = ignoredFields(team('spec.description, metadata.annotations'));
  it.each([
    ['spec.description', true],
    ['spec.description.x', true],
    ['spec.descriptions', false],
    ['spec.users', false],
    ['metadata.annotations.note', true],
    // The reconciler's own annotations stay visible whatever entry covers them, and so do their containers.
    ['metadata.annotations.gitops.management.service/sync-strategy', false],
    ['metadata.annotations.gitops.management.service/ignore-fields', false],
    ['metadata.annotations', false],
    ['metadata', false],
    // Its record of a delivered key is never in git: always left out, exactly that annotation.
    ['metadata.annotations.gitops.management.service/key-delivered', true],
  ])('with "spec.description, metadata.annotations": %s ignored is %s', (path, hidden) => {
    expect(ignored(path)).toBe(hidden);
  });

  it('without the annotation nothing is ignored but the delivered-key record', () => {
    const none = ignoredFields(team(undefined));
    expect(['spec.description', 'metadata.annotations.note', 'metadata'].map(none)).toEqual([false, false, false]);
    expect(none('metadata.annotations.gitops.management.service/key-delivered')).toBe(true);
    expect(none('metadata.annotations.gitops.management.service/key-delivered-x')).toBe(false);
  });

  it('an entry that would hide a field defining access is named with that field, an index counting as its list', () => {
    const obj = team('spec.description, spec.access[0].teams, spec.access[12].verbs, spec, metadata.labels');
    expect(accessFieldsIgnored(resourceModels().teams, obj)).toEqual([
      { entry: 'spec.access[0].teams', field: 'spec.access' },
      { entry: 'spec.access[12].verbs', field: 'spec.access' },
      { entry: 'spec', field: 'spec.owner' },
    ]);
  });

  it("a change of ignore-fields or sync-strategy is listed on its own in the Markdown report, other annotations are not", () => {
    const at = (name: string) => `metadata.annotations.gitops.management.service/${name}`;
    const report: Report = {
      apiVersion: 'teamkeys/v1',
      kind: 'Report',
      mode: 'plan',
      generatedAt: '2026-11-24T00:00:00Z',
      outcome: 'changes',
      source: { id: 'ci', description: 'a folder' },
      target: 'https://127.0.0.1:8443',
      summary: { create: 0, update: 1, replace: 0, delete: 0, unchanged: 0, skip: 0, drifted: 0, failed: 0 },
      errors: [],
      objects: [
        {
          kind: 'Team',
          name: 'platform',
          action: 'update',
          drift: false,
          changes: [
            { path: at('ignore-fields'), after: 'spec.description', drift: false },
            { path: at('sync-strategy'), before: 'replace', drift: false },
            { path: at('prune'), after: 'disabled', drift: false },
          ],
        },
      ],
    };
    const section = renderMarkdown(report).split('### Reconciler settings changed')[1]!.split('###')[0]!;
    const rows = section.split('\n').filter((l) => l.startsWith('- '));
    expect(rows).toEqual(['- Team/platform: `ignore-fields` (unset) → `spec.description`', '- Team/platform: `sync-strategy` `replace` → (removed)']);
  });
});
