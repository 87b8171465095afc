/**
 * kubectl's own access questions against a served process: `auth whoami`, `auth can-i` (its yes/no
 * and exit code agreeing with what the same request really gets, via server-side dry runs) and
 * `auth can-i --list`, for an administrator, a plain user and a key scoped to role cli.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
`;

const keys: Record<string, string> = {
  'dan-key': '{user: dan}',
  'dan-ro': '{user: dan, scope: {roles: [{role: cli}]}}',
  'carla-key': '{user: carla}',
};

describe('kubectl auth whoami / can-i / can-i --list', () => {
  let served: Served;
  const kubeconfigs: Record<string, string> = {};
  const as = (who: string, ...args: string[]) => kubectl(served, args, { kubeconfig: kubeconfigs[who]! });
  /** can-i's answer and exit code, beside what the request itself gets from the server. */
  const canI = (who: string, verb: string, target: string) => {
    const r = as(who, 'auth', 'can-i', verb, target);
    return { answer: r.stdout.trim(), code: r.code };
  };

  beforeAll(async () => {
    kubectlPath();
    served = await startServe();
    kubeconfigs.admin = served.kubeconfig;
    const path = join(served.dir, 'objects.yaml');
    writeFileSync(path, objects);
    expect(kubectl(served, ['create', '-f', path]).code).toBe(0);
    Object.assign(kubeconfigs, kubeconfigsForKeys(served, keys));
  });
  afterAll(async () => {
    expect(await served.stop()).toBe(0);
  });

  it('whoami names the user, groups, key, teams and scope of the key that asks', () => {
    const admin = as('admin', 'auth', 'whoami');
    expect(admin.code, admin.stderr).toBe(0);
    expect(admin.stdout).toMatch(/^Username\s+admin$/m);
    expect(admin.stdout).toMatch(/^Groups\s+\[system:authenticated\]$/m);
    expect(admin.stdout).toMatch(/^Extra: management\.service\/access-key\s+\[admin\]$/m);
    expect(admin.stdout).toMatch(/^Extra: management\.service\/teams\s+\[admins\]$/m);
    expect(admin.stdout).toMatch(/^Extra: management\.service\/roles\s+\[management-admin\]$/m);

    const readOnly = as('dan-ro', 'auth', 'whoami', '-o', 'json');
    expect(readOnly.code, readOnly.stderr).toBe(0);
    const info = (JSON.parse(readOnly.stdout) as { status: { userInfo: { username: string; extra: Record<string, string[]> } } }).status.userInfo;
    expect(info.username).toBe('dan');
    expect(info.extra['management.service/access-key']).toEqual(['dan-ro']);
    expect(info.extra['management.service/scope']).toEqual(['{"roles":[{"role":"cli"}]}']);
    // The key value never comes back.
    expect(readOnly.stdout).not.toMatch(/tk_[0-9A-Za-z]{49}/);
  });

  it('can-i answers yes (exit 0) or no (exit 1) exactly as the request itself is decided', () => {
    const cases: [who: string, verb: string, target: string, allowed: boolean, request: string[]][] = [
      ['admin', 'delete', 'teams/payments', true, ['delete', 'team', 'payments']],
      ['dan-key', 'update', 'teams/payments', true, ['label', 'team', 'payments', 'x=y']],
      ['dan-key', 'delete', 'oak/dan-ro', true, ['delete', 'oak', 'dan-ro']],
      ['dan-key', 'get', 'oak/carla-key', false, ['get', 'oak', 'carla-key']],
      ['dan-key', 'update', 'teams/auditors', false, ['label', 'team', 'auditors', 'x=y']],
      ['dan-ro', 'get', 'oak/dan-key', true, ['get', 'oak', 'dan-key']],
      ['dan-ro', 'delete', 'oak/dan-key', false, ['delete', 'oak', 'dan-key']],
      ['dan-ro', 'update', 'teams/payments', false, ['label', 'team', 'payments', 'x=y']],
      ['carla-key', 'get', 'teams/payments', true, ['get', 'team', 'payments']],
      ['carla-key', 'delete', 'teams/payments', false, ['delete', 'team', 'payments']],
    ];
    for (const [who, verb, target, allowed, request] of cases) {
      const { answer, code } = canI(who, verb, target);
      expect({ who, verb, target, answer: answer.split(' ')[0], code }).toEqual({ who, verb, target, answer: allowed ? 'yes' : 'no', code: allowed ? 0 : 1 });
      const real = as(who, ...request, ...(request[0] === 'get' ? [] : ['--dry-run=server']));
      expect({ who, request, code: real.code, forbidden: /Forbidden/.test(real.stderr) }).toEqual({ who, request, code: allowed ? 0 : 1, forbidden: !allowed });
    }
  });

  it("can-i gives the scope's reason, and answers for kinds in general", () => {
    expect(canI('dan-ro', 'delete', 'oak/dan-key').answer).toBe("no - the access key's scope (role cli) allows only read requests");
    expect(canI('dan-key', 'create', 'ownedaccesskeys')).toEqual({ answer: 'yes', code: 0 }); // everyone may make their own keys
    expect(canI('dan-ro', 'create', 'ownedaccesskeys').code).toBe(1);
    expect(canI('dan-key', 'create', 'teams')).toEqual({ answer: 'no', code: 1 });
    expect(canI('carla-key', 'list', 'teams')).toEqual({ answer: 'yes', code: 0 });
    expect(canI('admin', '*', '*')).toEqual({ answer: 'yes', code: 0 });
    expect(canI('dan-key', '*', '*').code).toBe(1);
  });

  it('can-i --list shows what each key may do, by kind and by object', () => {
    const rows = (who: string) => {
      const r = as(who, 'auth', 'can-i', '--list');
      expect(r.code, r.stderr).toBe(0);
      return r.stdout.split('\n').map((l) => l.trim().split(/\s{2,}/));
    };
    const admin = rows('admin');
    expect(admin).toContainEqual(['teams.management.service', '[]', '[]', '[*]']);
    expect(admin).toContainEqual(['ownedaccesskeys.management.service', '[]', '[]', '[*]']);

    const dan = rows('dan-key');
    expect(dan).toContainEqual(['teams.management.service', '[]', '[payments]', '[get update patch delete]']);
    expect(dan).toContainEqual(['ownedaccesskeys.management.service', '[]', '[dan-key]', '[get update patch delete]']);
    expect(dan).toContainEqual(['ownedaccesskeys.management.service', '[]', '[]', '[list watch create]']);
    expect(dan.flat().join(' ')).not.toContain('carla-key');

    const readOnly = rows('dan-ro');
    expect(readOnly).toContainEqual(['ownedaccesskeys.management.service', '[]', '[dan-key]', '[get]']);
    expect(readOnly).toContainEqual(['teams.management.service', '[]', '[payments]', '[get]']);
    const verbs = readOnly.filter((r) => r[0]!.includes('management.service')).map((r) => r[3]!.slice(1, -1).split(' '));
    expect(new Set(verbs.flat())).toEqual(new Set(['get', 'list', 'watch']));
  });
});
