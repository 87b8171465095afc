/**
 * kube's impersonation against a served process, with the real kubectl: `--as` / `--as-group` answer
 * as the impersonated user is answered (can-i --list, whoami, reads), only for holders of the
 * `impersonate` verb (the impersonator role, or management-admin) whose scope allows it, never
 * beyond what the impersonator could grant itself, and the audit trail names both.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEvent } from '../../src/api/audit-event.js';
import { kubeconfigsForKeys, kubectl, kubectlPath, startServe, type Served } from './serve-process.js';

const objects = `apiVersion: management.service/v1
kind: Team
metadata: {name: auditors}
spec: {users: [carla], clusterRoles: [{name: teams-viewer}]}
---
apiVersion: management.service/v1
kind: Team
metadata: {name: payments}
spec: {owner: {user: dan}}
---
apiVersion: management.service/v1
kind: Team
metadata: {name: eng}
spec: {groups: [eng-leads], clusterRoles: [{name: teams-admin}]}
---
apiVersion: management.service/v1
kind: Team
metadata: {name: support}
spec: {users: [sam], clusterRoles: [{name: impersonator}, {name: accesskeys-admin}, {name: teams-viewer}]}
`;

const keys: Record<string, string> = {
  'dan-key': '{user: dan}',
  'carla-key': '{user: carla}',
  'sam-key': '{user: sam}',
  'sam-ro': '{user: sam, scope: {roles: [{role: cli}]}}',
};

const forbiddenImpersonating = (who: string, user: string) => `Error from server (Forbidden): users "${user}" is forbidden: User "${who}" cannot impersonate resource "users" in API group "" at the cluster scope`;

describe('kubectl --as: impersonation', () => {
  let served: Served;
  const kubeconfigs: Record<string, string> = {};
  const as = (who: string, ...args: string[]) => kubectl(served, args, { kubeconfig: kubeconfigs[who]! });

  beforeAll(async () => {
    kubectlPath();
    served = await startServe();
    kubeconfigs.admin = served.kubeconfig;
    const path = join(served.dir, 'objects.yaml');
    writeFileSync(path, objects);
    const made = kubectl(served, ['create', '-f', path]);
    expect(made.code, made.stderr).toBe(0);
    Object.assign(kubeconfigs, kubeconfigsForKeys(served, keys));
  });
  afterAll(async () => {
    expect(await served.stop()).toBe(0);
  });

  it("can-i --list --as a user prints exactly that user's own can-i --list", () => {
    for (const [user, key] of [['dan', 'dan-key'], ['carla', 'carla-key']] as const) {
      const own = as(key, 'auth', 'can-i', '--list');
      const impersonated = as('admin', 'auth', 'can-i', '--list', '--as', user);
      expect(own.code, own.stderr).toBe(0);
      expect(impersonated.code, impersonated.stderr).toBe(0);
      expect(impersonated.stdout).toBe(own.stdout);
    }
    // Not the administrator's own list: it would show every team and key.
    expect(as('admin', 'auth', 'can-i', '--list', '--as', 'dan').stdout).not.toBe(as('admin', 'auth', 'can-i', '--list').stdout);
  });

  it('--as and --as-group are answered as that user in those groups', () => {
    const whoami = as('admin', 'auth', 'whoami', '--as', 'dan', '--as-group', 'eng-leads');
    expect(whoami.code, whoami.stderr).toBe(0);
    expect(whoami.stdout).toMatch(/^Username\s+dan$/m);
    expect(whoami.stdout).toMatch(/^Groups\s+\[eng-leads system:authenticated\]$/m);
    expect(as('admin', 'auth', 'can-i', 'delete', 'teams/auditors', '--as', 'dan').code).toBe(1);
    expect(as('admin', 'auth', 'can-i', 'delete', 'teams/auditors', '--as', 'dan', '--as-group', 'eng-leads').code).toBe(0);
    const keysOfDan = as('admin', 'get', 'oak', '--as', 'dan', '-o', 'name');
    expect(keysOfDan.code, keysOfDan.stderr).toBe(0);
    expect(keysOfDan.stdout.trim().split('\n')).toEqual(['ownedaccesskey.management.service/dan-key']);
    const refused = as('admin', 'delete', 'team', 'auditors', '--as', 'dan', '--dry-run=server');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('teams.management.service "auditors" is forbidden: User "dan" cannot delete resource "teams"');
  });

  it('impersonating without the impersonate verb is 403 in kube-apiserver words', () => {
    const dan = as('dan-key', 'get', 'teams', '--as', 'carla');
    expect(dan.code).toBe(1);
    expect(dan.stderr.trim()).toBe(forbiddenImpersonating('dan', 'carla'));
    expect(as('dan-key', 'auth', 'can-i', 'impersonate', 'users').stdout.trim()).toBe('no');
    // The impersonator role held through a key whose scope allows only reads: the scope decides.
    const readOnly = as('sam-ro', 'get', 'teams', '--as', 'carla');
    expect(readOnly.code).toBe(1);
    expect(readOnly.stderr.trim()).toBe(`${forbiddenImpersonating('sam', 'carla')}: the access key's scope (role cli) allows only read requests`);
    const groups = as('sam-ro', 'get', 'teams', '--as', 'carla', '--as-group', 'eng-leads');
    expect(groups.code).toBe(1);
    expect(groups.stderr).toContain('users "carla" is forbidden');
  });

  it('the impersonator role impersonates only users whose rights it holds itself', () => {
    expect(as('sam-key', 'auth', 'can-i', 'impersonate', 'users').stdout.trim()).toBe('yes');
    const list = as('sam-key', 'auth', 'can-i', '--list');
    expect(list.stdout).toMatch(/^users\s+\[\]\s+\[\]\s+\[impersonate\]$/m);
    // carla reads teams, as sam does: impersonating her gains nothing.
    const carla = as('sam-key', 'get', 'teams', '-o', 'name', '--as', 'carla');
    expect(carla.code, carla.stderr).toBe(0);
    expect(carla.stdout).toContain('team.management.service/payments');
    // dan owns payments; sam may only read it.
    const dan = as('sam-key', 'get', 'teams', '--as', 'dan');
    expect(dan.code).toBe(1);
    expect(dan.stderr.trim()).toBe(`${forbiddenImpersonating('sam', 'dan')}: impersonating "dan" would give you "create", "update", "patch", "delete", "deletecollection" on team "payments", which you do not hold`);
    // A group that would make carla a teams-admin, and the administrator itself.
    const withGroup = as('sam-key', 'get', 'teams', '--as', 'carla', '--as-group', 'eng-leads');
    expect(withGroup.code).toBe(1);
    expect(withGroup.stderr).toContain('impersonating "carla" would give you cluster role "teams-admin", which you do not hold');
    const admin = as('sam-key', 'get', 'teams', '--as', 'admin');
    expect(admin.code).toBe(1);
    expect(admin.stderr).toContain('cluster role "management-admin"');
  });

  it('the audit trail names the impersonator as user and the impersonated as impersonatedUser', () => {
    const made = kubectl(served, ['create', '-f', '-', '--as', 'dan', '--as-group', 'eng-leads', '-o', 'name'], {
      input: 'apiVersion: management.service/v1\nkind: OwnedAccessKey\nmetadata: {name: dan-made-by-admin}\nspec: {user: dan}\n',
    });
    expect(made.code, made.stderr).toBe(0);
    const events = as('admin', 'get', '--raw', '/kubernetes/management/apis/audit.management.service/v1/events?resource=ownedaccesskeys&name=dan-made-by-admin');
    expect(events.code, events.stderr).toBe(0);
    const items = (JSON.parse(events.stdout) as { items: AuditEvent[] }).items;
    expect(items).toHaveLength(1);
    expect(items[0]!.user).toEqual({ username: 'admin', keyName: 'admin' });
    expect(items[0]!.impersonatedUser).toEqual({ username: 'dan', groups: ['eng-leads'] });
    expect(items[0]!.verb).toBe('create');
  });
});
