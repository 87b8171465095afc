import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { kubectl, kubectlPath, startServe, type Served } from './serve-process.js';

interface Entry {
  manager: string;
  operation: string;
  fieldsV1: Record<string, unknown>;
}

describe('kubectl apply --server-side', () => {
  let served: Served;
  const k = (...args: string[]) => kubectl(served, args);
  const manifest = (name: string, displayName: string) => {
    const path = join(served.dir, name);
    writeFileSync(path, `apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: ssa\nspec:\n  displayName: ${displayName}\n  users: [ana, bo]\n`);
    return path;
  };
  const managed = () =>
    (parse(k('get', 'team', 'ssa', '-o', 'yaml', '--show-managed-fields').stdout) as { metadata: { managedFields: Entry[] } }).metadata.managedFields.map(
      (e) => [e.manager, e.operation, e.fieldsV1],
    );

  beforeAll(async () => {
    kubectlPath();
    served = await startServe();
  });
  afterAll(async () => {
    await served.stop();
  });

  it('records the applier as manager kubectl with operation Apply', () => {
    const r = k('apply', '--server-side', '-f', manifest('a.yaml', 'First'));
    expect(r.stdout.trim()).toBe('team.management.service/ssa serverside-applied');
    expect(managed()).toEqual([['kubectl', 'Apply', { 'f:spec': { 'f:displayName': {}, 'f:users': { 'v:"ana"': {}, 'v:"bo"': {} } } }]]);
  });

  it('a second manager applying another value gets a conflict naming the field and the first manager', () => {
    const r = k('apply', '--server-side', '--field-manager=platform-bot', '-f', manifest('b.yaml', 'Second'));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('Apply failed with 1 conflict: conflict with "kubectl": .spec.displayName');
    expect(k('get', 'team', 'ssa', '-o', 'jsonpath={.spec.displayName}').stdout).toBe('First');
  });

  it('--force-conflicts takes the field over', () => {
    const r = k('apply', '--server-side', '--field-manager=platform-bot', '--force-conflicts', '-f', manifest('b.yaml', 'Second'));
    expect(r.code).toBe(0);
    expect(k('get', 'team', 'ssa', '-o', 'jsonpath={.spec.displayName}').stdout).toBe('Second');
    expect(managed()).toEqual([
      ['kubectl', 'Apply', { 'f:spec': { 'f:users': { 'v:"ana"': {}, 'v:"bo"': {} } } }],
      ['platform-bot', 'Apply', { 'f:spec': { 'f:displayName': {}, 'f:users': { 'v:"ana"': {}, 'v:"bo"': {} } } }],
    ]);
  });

  it('kubectl patch and edit-style writes appear as Update entries with their manager names', () => {
    expect(k('patch', 'team', 'ssa', '--type=merge', '-p', '{"spec":{"description":"patched"}}').code).toBe(0);
    expect(managed()).toContainEqual(['kubectl-patch', 'Update', { 'f:spec': { 'f:description': {} } }]);
  });
});
