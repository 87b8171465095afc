/**
 * Issue 42, point 5: `ignore-fields: metadata.annotations, spec.users` added by a pull request made
 * the plan say "no changes" (the annotation hid itself), and drift in spec.users stayed invisible
 * after the merge. Fields that define access cannot be ignored (refused at file:line), the
 * reconciler's own annotations are never ignored, and a change to ignore-fields or sync-strategy
 * is shown as a change of its own.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { teamkeys } from '../support/cli.js';

const team = (ignore: string) =>
  `apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: platform\n${ignore ? `  annotations:\n    gitops.management.service/ignore-fields: "${ignore}"\n` : ''}spec:\n  users: [ana]\n  description: Platform\n`;

describe('ignore-fields and the fields that define access', () => {
  let work: string;
  let source: string;
  const write = (file: string, text: string) => writeFileSync(join(source, file), text);
  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'teamkeys-ignore-'));
    source = join(work, 'src');
    mkdirSync(source);
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('refuses ignore-fields entries that name or hold a field defining access, at their file:line:col', () => {
    write('platform.yaml', team('metadata.annotations, spec.users'));
    write('key.yaml', 'apiVersion: management.service/v1\nkind: OwnedAccessKey\nmetadata:\n  name: ci\n  annotations:\n    gitops.management.service/ignore-fields: "spec.scope, spec.ttl, spec"\nspec:\n  user: ci-bot\n');
    const r = teamkeys(['validate', '--source', source]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('platform.yaml:6:46: gitops.management.service/ignore-fields may not name "spec.users": spec.users defines access, so a change to it (drift included) is always shown and written');
    expect(r.stdout).toMatch(/key\.yaml:6:\d+: gitops\.management\.service\/ignore-fields may not name "spec\.scope": spec\.scope defines access/);
    expect(r.stdout).toMatch(/key\.yaml:6:\d+: gitops\.management\.service\/ignore-fields may not name "spec\.ttl": spec\.ttl defines access/);
    expect(r.stdout).toMatch(/key\.yaml:6:\d+: gitops\.management\.service\/ignore-fields may not name "spec": spec\.user defines access/);
    rmSync(join(source, 'key.yaml'));
  });

  it('an ignore-fields added to a live object is a change of its own, never hidden by ignoring metadata.annotations', () => {
    const store = ['--store', `sqlite:${join(work, 'store.db')}`, '--source-id', 'ignore'];
    write('platform.yaml', team(''));
    expect(teamkeys(['apply', '--source', source, ...store]).code).toBe(0);
    write('platform.yaml', team('metadata.annotations, spec.description'));
    const r = teamkeys(['plan', '--source', source, ...store, '--report-dir', join(work, 'report')]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('Plan: 0 to create, 1 to update');
    const md = readFileSync(join(work, 'report/report.md'), 'utf8');
    expect(md).toContain('### Reconciler settings changed');
    expect(md).toContain('- Team/platform: `ignore-fields` (unset) → `metadata.annotations, spec.description`');
  });
});
