/**
 * kubectl round trips that need the API machinery kube-apiserver has (issue 26): a `kind: List`
 * through replace and apply, the client-side to server-side apply upgrade (apply and diff),
 * deletion without a grace period, `kubectl events`, and `kubectl apply --prune`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { kubectl, kubectlPath, servedFile, startServe, type Served } from './serve-process.js';

interface Entry {
  manager: string;
  operation: string;
  fieldsV1: { 'f:spec'?: Record<string, unknown> };
}

describe('kubectl round trips', () => {
  let served: Served;
  const k = (...args: string[]) => kubectl(served, args);
  const file = (name: string, text: string) => servedFile(served, name, text);
  const team = (name: string, displayName: string) => `apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: ${name}\nspec:\n  displayName: ${displayName}\n`;

  beforeAll(async () => {
    kubectlPath();
    served = await startServe();
  });
  afterAll(async () => {
    await served.stop();
  });

  it('kubectl get -o json | kubectl replace -f - replaces every item of the List', () => {
    expect(k('create', '-f', file('rt.yaml', team('rt-a', 'A'))).code).toBe(0);
    const list = k('get', 'teams', '-o', 'json');
    expect(JSON.parse(list.stdout)).toMatchObject({ kind: 'List', apiVersion: 'v1' });
    const r = kubectl(served, ['replace', '-f', '-'], { input: list.stdout });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('team.management.service/rt-a replaced');
  });

  it('kubectl apply -f of a kind: List file creates and then configures its items', () => {
    const items = (a: string) =>
      JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [parse(team('list-a', a)), parse(team('list-b', 'B'))] });
    const first = k('apply', '-f', file('list.json', items('A')));
    expect(first.stderr).toBe('');
    expect(first.stdout.trim().split('\n')).toEqual(['team.management.service/list-a created', 'team.management.service/list-b created']);
    const second = k('apply', '-f', file('list.json', items('A2')));
    expect(second.code).toBe(0);
    expect(second.stdout).toContain('team.management.service/list-a configured');
    expect(k('get', 'team', 'list-a', '-o', 'jsonpath={.spec.displayName}').stdout).toBe('A2');
  });

  it('moves from kubectl apply to kubectl apply --server-side without a conflict (diff --server-side too)', () => {
    expect(k('apply', '-f', file('csa.yaml', team('csa', 'First'))).code).toBe(0);
    const changed = file('csa.yaml', team('csa', 'Second'));
    const diff = k('diff', '--server-side', '-f', changed);
    // kubectl diff exits 1 when there are differences, and prints them; an error would be another code.
    expect(diff.stderr).toBe('');
    expect(diff.code).toBe(1);
    expect(diff.stdout).toContain('+  displayName: Second');
    const applied = k('apply', '--server-side', '-f', changed);
    expect(applied.stderr).toBe('');
    expect(applied.stdout.trim()).toBe('team.management.service/csa serverside-applied');
    const got = parse(k('get', 'team', 'csa', '-o', 'yaml', '--show-managed-fields').stdout) as { spec: { displayName: string }; metadata: { managedFields: Entry[] } };
    expect(got.spec.displayName).toBe('Second');
    const owner = got.metadata.managedFields.filter((e) => e.fieldsV1['f:spec'] && 'f:displayName' in e.fieldsV1['f:spec']);
    expect(owner.map((e) => [e.manager, e.operation])).toEqual([['kubectl', 'Apply']]);
    // Another manager still conflicts: only kubectl's own last-applied fields pass.
    const other = k('apply', '--server-side', '--field-manager=someone-else', '-f', file('csa.yaml', team('csa', 'Third')));
    expect(other.code).toBe(1);
    expect(other.stderr).toContain('conflict with "kubectl"');
  });

  it('kubectl delete --now and --grace-period=5 remove the object at once, as for a custom resource', () => {
    for (const [name, flag] of [['now', '--now'], ['grace', '--grace-period=5']]) {
      expect(k('create', '-f', file(`${name}.yaml`, team(name!, 'x'))).code).toBe(0);
      const r = k('delete', 'team', name!, flag!);
      expect(r.stdout.trim()).toBe(`team.management.service "${name}" deleted`);
      expect(k('get', 'team', name!).stderr).toContain('NotFound');
    }
  });

  it('kubectl events answers that there are none', () => {
    const here = k('events');
    expect(here.code).toBe(0);
    expect(here.stderr.trim()).toBe('No events found in default namespace.');
    const all = k('events', '-A');
    expect(all.code).toBe(0);
    expect(all.stderr.trim()).toBe('No events found.');
  });
  it('kubectl apply --prune -l with the default allow-list exits 0; with Team allowed it prunes the removed Team', () => {
    const dir = join(served.dir, 'pruned');
    mkdirSync(dir);
    const labelled = (name: string) => team(name, name).replace(`  name: ${name}\n`, `  name: ${name}\n  labels:\n    app: x\n`);
    writeFileSync(join(dir, 'keep.yaml'), labelled('prune-keep'));
    writeFileSync(join(dir, 'gone.yaml'), labelled('prune-gone'));
    const prune = (...extra: string[]) => k('apply', '--prune', '-l', 'app=x', '-f', dir, ...extra);
    const first = prune();
    expect(first.stderr).not.toContain('error');
    expect(first.stdout.trim().split('\n')).toEqual(['team.management.service/prune-gone created', 'team.management.service/prune-keep created']);
    rmSync(join(dir, 'gone.yaml'));
    // kubectl's default allow-list names built-in kinds only, so it prunes no Team, as against
    // kube-apiserver with a custom resource; it needs them mapped, though, or it fails.
    const byDefault = prune();
    expect(byDefault.stderr).not.toContain('error');
    expect(byDefault.code).toBe(0);
    expect(byDefault.stdout.trim()).toBe('team.management.service/prune-keep unchanged');
    const teams = () => k('get', 'teams', '-l', 'app=x', '-o', 'name').stdout.trim().split('\n');
    expect(teams()).toEqual(['team.management.service/prune-gone', 'team.management.service/prune-keep']);
    const allowed = prune('--prune-allowlist=management.service/v1/Team');
    expect(allowed.stderr).toBe('');
    expect(allowed.code).toBe(0);
    expect(allowed.stdout.trim().split('\n')).toEqual(['team.management.service/prune-keep unchanged', 'team.management.service/prune-gone pruned']);
    expect(teams()).toEqual(['team.management.service/prune-keep']);
  });

  it('the kinds listed for kubectl are empty to read and refused to write', () => {
    expect(k('get', 'configmaps,deployments,ingresses,cronjobs', '-A').stderr.trim()).toBe('No resources found');
    const refused = k('create', 'configmap', 'cfg', '-n', 'x');
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toBe(
      "error: failed to create configmap: POST is not supported on configmaps: this server serves only management.service; ConfigMap is listed so kubectl's defaults work",
    );
  });
});
