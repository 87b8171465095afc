import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import type { KubeObject } from '../../src/api/types.js';
import { teamkeys } from '../support/cli.js';
import { kubectl, startServe, type Served } from '../server/serve-process.js';
import { newRepo, type Repo } from './git-repo.js';

describe('teamkeys import against a served process', () => {
  let served: Served;
  let repo: Repo;
  let out: string;
  const target = () => ['--server', served.url, '--token-file', join(served.dir, 'admin.key'), '--ca-file', join(served.dir, 'tls/cert.pem')];
  /** What adoption must leave alone: every field but the source annotation it adds. */
  const fields = () =>
    (JSON.parse(kubectl(served, ['get', 'teams,oak', '-o', 'json']).stdout) as { items: KubeObject[] }).items.map((o) => {
      const { [`gitops.management.service/source`]: _source, ...annotations } = o.metadata.annotations ?? {};
      return { kind: o.kind, name: o.metadata.name, labels: o.metadata.labels, annotations, spec: o.spec };
    });

  beforeAll(async () => {
    served = await startServe();
    repo = await newRepo();
    out = mkdtempSync(join(tmpdir(), 'teamkeys-import-'));
    // Objects made by hand, as a team that already has keys has them.
    const created = kubectl(served, ['create', '-f', '-'], {
      input: [
        'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: ops\n  labels: {department: ops}\n  annotations: {example.com/ticket: OPS-1}\nspec:\n  displayName: Ops\n  owner: {user: ana}\n  users: [ana, bo]\n  clusterRoles:\n    - name: teams-viewer\n  access:\n    - name: edit\n      verbs: [get, patch]\n      teams: [ops]\n',
        'apiVersion: management.service/v1\nkind: OwnedAccessKey\nmetadata:\n  name: ops-ci\nspec:\n  team: ops\n  type: User\n  ttl: 86400\n  scope:\n    roles:\n      - role: cli\n',
        'apiVersion: management.service/v1\nkind: OwnedAccessKey\nmetadata:\n  name: ops-given\nspec:\n  user: bo\n  type: User\n  key: givenKeyValue0123456789givenKeyValue0123456789givenKeyValue0123\n',
      ].join('---\n'),
    });
    expect(created.stderr).toBe('');
    // And objects a GitOps source already manages.
    expect(teamkeys(['apply', '--source', repo.dir, '--source-id', 'existing', ...target()]).code).toBe(0);
  });
  afterAll(async () => {
    await served.stop();
    repo.cleanup();
    rmSync(out, { recursive: true, force: true });
  });

  it('writes one manifest per unmanaged object, without server-set fields or secrets', () => {
    const r = teamkeys(['import', '--out', out, ...target()]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    // One line however many were skipped (issue 28: 619 lines for 619 managed objects), counted by reason.
    expect(r.stdout).toMatch(/^Imported 5 object\(s\) into .*; skipped (\d+): \1 managed by GitOps source existing \(--all imports it too\) \(--verbose lists each\)\.\n$/);
    expect(readdirSync(join(out, 'teams')).sort()).toEqual(['admins.yaml', 'ops.yaml']);
    expect(readdirSync(join(out, 'ownedaccesskeys')).sort()).toEqual(['admin.yaml', 'ops-ci.yaml', 'ops-given.yaml']);
    expect(parse(readFileSync(join(out, 'teams/ops.yaml'), 'utf8'))).toEqual({
      apiVersion: 'management.service/v1',
      kind: 'Team',
      metadata: { name: 'ops', labels: { department: 'ops' }, annotations: { 'example.com/ticket': 'OPS-1' } },
      spec: { displayName: 'Ops', owner: { user: 'ana' }, users: ['ana', 'bo'], clusterRoles: [{ name: 'teams-viewer' }], access: [{ name: 'edit', verbs: ['get', 'patch'], teams: ['ops'] }] },
    });
    const all = readdirSync(out, { recursive: true }).filter((f) => String(f).endsWith('.yaml')).map((f) => readFileSync(join(out, String(f)), 'utf8')).join('\n');
    for (const secretOrServerField of ['givenKeyValue', served.adminKey, 'uid:', 'resourceVersion', 'managedFields', 'creationTimestamp', 'status:', 'key:']) expect(all).not.toContain(secretOrServerField);
  });

  it('--verbose lists each skipped object with why', () => {
    const elsewhere = mkdtempSync(join(tmpdir(), 'teamkeys-import-verbose-'));
    try {
      const r = teamkeys(['import', '--out', elsewhere, '--verbose', ...target()]);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('skipped Team/platform: managed by GitOps source existing (--all imports it too)\n');
      expect(r.stdout).not.toContain('--verbose lists each');
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });

  it('the files validate, adopting them changes no field, and the next plan is clean', () => {
    expect(teamkeys(['validate', '--source', out]).stdout).toMatch(/^The manifests are valid: checked 5 objects \(3 OwnedAccessKeys, 2 Teams\) from source /);
    const before = fields();
    const adopted = teamkeys(['apply', '--source', out, '--source-id', 'imported', ...target()]);
    expect(adopted.code).toBe(0);
    expect(fields()).toEqual(before);
    expect(kubectl(served, ['get', 'team', 'ops', '-o', 'jsonpath={.metadata.annotations.gitops\\.management\\.service/source}']).stdout).toBe('imported');
    const plan = teamkeys(['plan', '--source', out, '--source-id', 'imported', '--detailed-exitcode', ...target()]);
    expect(plan.stdout).toContain('Plan: 0 to create, 0 to update, 0 to replace, 0 to delete, 5 unchanged');
    expect(plan.code).toBe(0);
  });

  it('never overwrites a file: a second import into the same folder writes nothing', () => {
    const r = teamkeys(['import', '--out', out, '--all', ...target()]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: 5 file\(s\) already exist in .*: nothing was written; import into an empty folder\n$/);
    expect(readdirSync(join(out, 'teams')).sort()).toEqual(['admins.yaml', 'ops.yaml']);
  });
});
