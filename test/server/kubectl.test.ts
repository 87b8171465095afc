import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { root } from '../support/cli.js';
import { kubeconfigWithToken, kubectl, kubectlPath, servedFile, startServe, type Served } from './serve-process.js';
import { eventually } from '../support/eventually.js';

interface Obj {
  metadata: Record<string, unknown> & { name: string; resourceVersion: string };
  spec: Record<string, unknown>;
}

describe('kubectl v1.32 against teamkeys serve', () => {
  let served: Served;
  const k = (...args: string[]) => kubectl(served, args);
  const file = (name: string, text: string) => servedFile(served, name, text);

  beforeAll(async () => {
    kubectlPath();
    served = await startServe();
  });
  afterAll(async () => {
    expect(await served.stop()).toBe(0);
  });

  it('api-resources lists every kind with short names, cluster-scoped', () => {
    const r = k('api-resources', '--api-group=management.service');
    expect(r.code).toBe(0);
    const rows = r.stdout.trim().split('\n').map((l) => l.split(/\s+/));
    expect(rows[0]).toEqual(['NAME', 'SHORTNAMES', 'APIVERSION', 'NAMESPACED', 'KIND']);
    expect(rows.slice(1)).toEqual([
      ['accessrequests', 'areq', 'management.service/v1', 'false', 'AccessRequest'],
      ['federatedcredentials', 'fedcred', 'management.service/v1', 'false', 'FederatedCredential'],
      ['ownedaccesskeys', 'oak', 'management.service/v1', 'false', 'OwnedAccessKey'],
      ['teams', 'tm', 'management.service/v1', 'false', 'Team'],
    ]);
  });

  it('create -f a directory of YAML creates every object', () => {
    // Teams first: a team key is refused (422) until its team exists.
    const r = k('create', '-R', '-f', join(root, 'examples/gitops/teams'), '-f', join(root, 'examples/gitops/accesskeys'));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n').sort()).toEqual([
      'ownedaccesskey.management.service/ana-laptop created',
      'ownedaccesskey.management.service/payments-ci created',
      'team.management.service/auditors created',
      'team.management.service/payments created',
      'team.management.service/platform created',
    ]);
  });

  it('get prints the server-side table, and -o wide adds columns', () => {
    const r = k('get', 'teams');
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^NAME\s+DISPLAY NAME\s+USERS\s+GROUPS\s+AGE$/);
    expect(lines.map((l) => l.split(/\s+/)[0])).toEqual(['NAME', 'admins', 'auditors', 'payments', 'platform']);
    expect(lines[4]).toMatch(/^platform\s+Platform\s+ana,bo\s+platform\s+\d+s$/);
    const keys = k('get', 'oak');
    expect(keys.stdout.split('\n')[0]).toMatch(/^NAME\s+DISPLAY NAME\s+USER\s+TEAM\s+DISABLED\s+TYPE\s+LAST ACTIVITY\s+AGE$/);
    expect(keys.stdout).toMatch(/payments-ci\s+Payments CI\s+payments\s+false/);
    expect(k('get', 'teams', '-o', 'wide').stdout.split('\n')[0]).toContain('CLUSTER ROLES');
  });

  it('get -o yaml shows the stored object with server-set metadata and no key', () => {
    const team = parse(k('get', 'team', 'platform', '-o', 'yaml').stdout) as Obj;
    expect(team.spec).toMatchObject({ displayName: 'Platform', users: ['ana', 'bo'], clusterRoles: [{ name: 'management-admin' }] });
    expect(team.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(team.metadata.generation).toBe(1);
    const key = parse(k('get', 'ownedaccesskey', 'payments-ci', '-o', 'yaml').stdout) as Obj;
    expect(key.spec.team).toBe('payments');
    expect(key.spec.key).toBeUndefined();
  });

  it('create refuses unknown fields (server-side strict validation) and invalid objects', () => {
    const typo = file('typo.yaml', 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: typo\nspec:\n  userz: [a]\n');
    const strict = k('create', '-f', typo);
    expect(strict.code).toBe(1);
    expect(strict.stderr).toContain('strict decoding error: unknown field "spec.userz"');
    const warn = k('create', '-f', typo, '--validate=warn');
    expect(warn.code).toBe(0);
    expect(warn.stderr).toContain('Warning: unknown field "spec.userz"');
    const bad = file('bad.yaml', 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: Bad_Name\n');
    const invalid = k('create', '-f', bad);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toContain('The Team "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name"');
  });

  it('create --dry-run=server writes nothing', () => {
    const dry = file('dry.yaml', 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: dry\n');
    expect(k('create', '-f', dry, '--dry-run=server').stdout.trim()).toBe('team.management.service/dry created (server dry run)');
    expect(k('get', 'team', 'dry').stderr.trim()).toBe('Error from server (NotFound): teams.management.service "dry" not found');
  });

  it('replace writes an edited object, and a stale resourceVersion is a Conflict', () => {
    const live = k('get', 'team', 'auditors', '-o', 'yaml').stdout;
    const edited = file('auditors.yaml', live.replace('displayName: Auditors', 'displayName: External Auditors'));
    expect(k('replace', '-f', edited).stdout.trim()).toBe('team.management.service/auditors replaced');
    expect((parse(k('get', 'team', 'auditors', '-o', 'yaml').stdout) as Obj).spec.displayName).toBe('External Auditors');
    const stale = k('replace', '-f', edited);
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain(
      'Error from server (Conflict): error when replacing "' +
        edited +
        '": Operation cannot be fulfilled on teams.management.service "auditors": the object has been modified; please apply your changes to the latest version and try again',
    );
  });

  it('patch --type=json and --type=merge', () => {
    expect(k('patch', 'team', 'platform', '--type=json', '-p', '[{"op":"add","path":"/spec/users/-","value":"cy"}]').stdout.trim()).toBe(
      'team.management.service/platform patched',
    );
    expect(k('patch', 'team', 'platform', '--type=merge', '-p', '{"spec":{"description":"merged"}}').code).toBe(0);
    const team = parse(k('get', 'team', 'platform', '-o', 'yaml').stdout) as Obj;
    expect(team.spec.users).toEqual(['ana', 'bo', 'cy']);
    expect(team.spec.description).toBe('merged');
    const failed = k('patch', 'team', 'platform', '--type=json', '-p', '[{"op":"test","path":"/spec/users/0","value":"zed"}]');
    expect(failed.code).toBe(1);
    // kube-apiserver's generic 422, which kubectl prints as an invalid request.
    expect(failed.stderr).toContain('The request is invalid: the server rejected our request due to an error in our request');
  });

  it('get --watch sees a change made by someone else', async () => {
    const child = spawn(kubectlPath(), ['get', 'teams', '--watch', '--request-timeout=20s'], {
      env: { PATH: process.env.PATH ?? '', HOME: served.dir, KUBECONFIG: served.kubeconfig },
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    try {
      await eventually('the watch printed the team', () => out.includes('platform'));
      expect(k('patch', 'team', 'payments', '--type=merge', '-p', '{"spec":{"displayName":"Payments and Billing"}}').code).toBe(0);
      await eventually('the watch printed the change', () => out.includes('Payments and Billing'));
      expect(out.split('\n').filter((l) => l.startsWith('NAME'))).toHaveLength(1);
    } finally {
      child.kill();
    }
  });

  it('explain reads the descriptions of the schemas', () => {
    const spec = k('explain', 'team.spec');
    expect(spec.code).toBe(0);
    expect(spec.stdout).toContain('KIND:       Team');
    expect(spec.stdout).toContain('clusterRoles\t<[]Object>');
    expect(spec.stdout).toContain("Cluster roles assigned to the team's users.");
    expect(k('explain', 'team.spec.description').stdout).toContain("The team's description: what the team is for and who runs it.");
    const ttl = k('explain', 'ownedaccesskey.spec.ttl');
    expect(ttl.stdout).toContain('Time to live of the key, in seconds.');
  });

  it('diff says nothing for an unchanged file and shows a change (exit 1) for a changed one', () => {
    const same = k('diff', '-f', join(root, 'examples/gitops/teams/auditors.yaml'));
    // auditors was edited by the replace test above: diff shows the way back.
    expect(same.code).toBe(1);
    expect(same.stdout).toContain('-  displayName: External Auditors');
    expect(same.stdout).toContain('+  displayName: Auditors');
    const unchanged = k('diff', '-f', join(root, 'examples/gitops/accesskeys/ci.yaml'));
    expect(unchanged.stderr).toBe('');
    expect(unchanged.stdout).toBe('');
    expect(unchanged.code).toBe(0);
  });

  it('works with a kubeconfig carrying a key created through the API, within the rights of that key', () => {
    const readers = file('readers.yaml', 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: readers\nspec:\n  users: [kim]\n  clusterRoles:\n  - name: teams-viewer\n');
    expect(k('create', '-f', readers).code).toBe(0);
    const keyFile = file('kim.yaml', 'apiVersion: management.service/v1\nkind: OwnedAccessKey\nmetadata:\n  name: kim-laptop\nspec:\n  user: kim\n  ttl: 3600\n');
    const created = k('create', '-f', keyFile, '-o', 'jsonpath={.spec.key}');
    expect(created.stdout).toMatch(/^tk_[0-9A-Za-z]{49}$/);
    const kubeconfig = kubeconfigWithToken(served, created.stdout, 'kim');
    const asKim = (...args: string[]) => kubectl(served, args, { kubeconfig });
    const teams = asKim('get', 'teams', '-o', 'name');
    expect(teams.code).toBe(0);
    expect(teams.stdout).toContain('team.management.service/readers');
    expect(asKim('get', 'oak', '-o', 'name').stdout.trim()).toBe('ownedaccesskey.management.service/kim-laptop');
    const denied = asKim('patch', 'team', 'readers', '--type=merge', '-p', '{"spec":{"description":"kim was here"}}');
    expect(denied.code).toBe(1);
    expect(denied.stderr.trim()).toBe(
      'Error from server (Forbidden): teams.management.service "readers" is forbidden: User "kim" cannot patch resource "teams" in API group "management.service" at the cluster scope',
    );
    expect(asKim('get', 'oak', 'kim-laptop', '-o', 'jsonpath={.spec.key}').stdout).toBe('');
  });

  it('delete removes the object and waits for it to be gone', () => {
    const r = k('delete', 'team', 'payments');
    expect(r.stdout.trim()).toBe('team.management.service "payments" deleted');
    expect(k('get', 'team', 'payments').stderr.trim()).toBe('Error from server (NotFound): teams.management.service "payments" not found');
    expect(k('get', 'teams', '-o', 'name').stdout.trim().split('\n')).toEqual([
      'team.management.service/admins',
      'team.management.service/auditors',
      'team.management.service/platform',
      'team.management.service/readers',
      'team.management.service/typo',
    ]);
  });
});
