/**
 * kubectl round trips that need the API machinery kube-apiserver has (issue 26): a `kind: List`
 * through replace and apply, the client-side to server-side apply upgrade (apply and diff),
 * deletion without a grace period, and `kubectl events`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
});
