import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../support/eventually.js';
import { kubectl, kubectlPath, startServe, type Served } from '../support/serve-process.js';

describe('deletion lifecycle through kubectl', () => {
  let served: Served;
  const k = (...args: string[]) => kubectl(served, args);
  const exists = (kind: string, name: string) => k('get', kind, name, '-o', 'name').code === 0;
  const apply = (name: string, text: string) => {
    const path = join(served.dir, `${name}.yaml`);
    writeFileSync(path, text);
    expect(k('create', '-f', path).code).toBe(0);
  };
  const ownerWithKey = (owner: string, block: boolean, keyFinalizer?: string) => {
    apply(owner, `apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: ${owner}\n`);
    const uid = k('get', 'team', owner, '-o', 'jsonpath={.metadata.uid}').stdout;
    apply(
      `${owner}-key`,
      [
        'apiVersion: management.service/v1',
        'kind: OwnedAccessKey',
        'metadata:',
        `  name: ${owner}-key`,
        ...(keyFinalizer ? ['  finalizers:', `  - ${keyFinalizer}`] : []),
        '  ownerReferences:',
        '  - apiVersion: management.service/v1',
        '    kind: Team',
        `    name: ${owner}`,
        `    uid: ${uid}`,
        `    blockOwnerDeletion: ${block}`,
        'spec:',
        // A user key: a team key's binding to its team is the server's (test/auth/escalation-paths.test.ts).
        '  user: owner-tests',
        '',
      ].join('\n'),
    );
  };

  beforeAll(async () => {
    kubectlPath();
    served = await startServe();
  });
  afterAll(async () => {
    await served.stop();
  });

  it('a finalizer blocks removal; the watch sees MODIFIED, then DELETED when it is removed', async () => {
    apply('held', 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: held\n  finalizers:\n  - example.com/hold\n');
    const watch = spawn(kubectlPath(), ['get', 'team', 'held', '--watch-only', '--output-watch-events', '--request-timeout=20s'], {
      env: { PATH: process.env.PATH ?? '', HOME: served.dir, KUBECONFIG: served.kubeconfig },
    });
    let out = '';
    watch.stdout.on('data', (d: Buffer) => (out += d.toString()));
    try {
      await new Promise((r) => setTimeout(r, 500));
      expect(k('delete', 'team', 'held', '--wait=false').code).toBe(0);
      expect(exists('team', 'held')).toBe(true);
      expect(k('get', 'team', 'held', '-o', 'jsonpath={.metadata.deletionTimestamp}').stdout).toMatch(/Z$/);
      await eventually('the watch saw the deletion start', () => out.includes('MODIFIED'));
      expect(k('patch', 'team', 'held', '--type=json', '-p', '[{"op":"remove","path":"/metadata/finalizers"}]').code).toBe(0);
      await eventually('the watch saw the removal', () => out.includes('DELETED'));
      const rows = out.trim().split('\n').map((l) => l.split(/\s+/).slice(0, 2));
      expect(rows).toEqual([
        ['EVENT', 'NAME'],
        ['MODIFIED', 'held'],
        ['DELETED', 'held'],
      ]);
      expect(exists('team', 'held')).toBe(false);
    } finally {
      watch.kill();
    }
  });

  it('--cascade=background: an access key owned by a team is collected after the team is deleted', async () => {
    ownerWithKey('bg', false);
    expect(k('delete', 'team', 'bg', '--cascade=background').code).toBe(0);
    await eventually('the dependent key is collected', () => !exists('ownedaccesskey', 'bg-key'));
  });

  it('--cascade=foreground: the team waits for its blocking key', async () => {
    ownerWithKey('fg', true, 'example.com/hold');
    expect(k('delete', 'team', 'fg', '--cascade=foreground', '--wait=false').code).toBe(0);
    await eventually('the key is being deleted', () => k('get', 'ownedaccesskey', 'fg-key', '-o', 'jsonpath={.metadata.deletionTimestamp}').stdout !== '');
    expect(k('get', 'team', 'fg', '-o', 'jsonpath={.metadata.finalizers}').stdout).toBe('["foregroundDeletion"]');
    expect(exists('team', 'fg')).toBe(true);
    expect(k('patch', 'ownedaccesskey', 'fg-key', '--type=json', '-p', '[{"op":"remove","path":"/metadata/finalizers"}]').code).toBe(0);
    await eventually('the team goes once nothing blocks it', () => !exists('team', 'fg'));
  });

  it('--cascade=orphan: the key keeps living without the reference', async () => {
    ownerWithKey('or', true);
    expect(k('delete', 'team', 'or', '--cascade=orphan').code).toBe(0);
    await eventually('the team is removed', () => !exists('team', 'or'));
    expect(exists('ownedaccesskey', 'or-key')).toBe(true);
    expect(k('get', 'ownedaccesskey', 'or-key', '-o', 'jsonpath={.metadata.ownerReferences}').stdout).toBe('');
  });
});
