/**
 * The audit trail of a served process on SQLite: every write recorded with the key's user and the
 * key's name, readable by management admins only, written as JSON lines with --audit-log, never
 * holding a key value; it survives a restart and is trimmed after --audit-retention.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEvent } from '../../src/api/audit-event.js';
import { eventually } from '../daemon/watch-process.js';
import { kubectl, kubectlPath, kubeconfigWithToken, startServe, type Served } from './serve-process.js';

const adminKey = 'AdminKeyForTheAuditTrailTest0123456789abcdefghij';
const olgaKey = 'OlgaLaptopKey0123456789abcdefghijklmnopqrstuvwxyz';
const vicKey = 'VicViewerKey0123456789abcdefghijklmnopqrstuvwxyzAB';
const scopedKey = 'AdminScopedToTeams0123456789abcdefghijklmnopqrstu';
const setup = `apiVersion: management.service/v1
kind: Team
metadata: {name: ops}
spec: {users: [olga], clusterRoles: [{name: teams-admin}]}
---
apiVersion: management.service/v1
kind: Team
metadata: {name: viewers}
spec: {users: [vic], clusterRoles: [{name: teams-viewer}]}
---
apiVersion: management.service/v1
kind: OwnedAccessKey
metadata: {name: olga-laptop}
spec: {user: olga, key: ${olgaKey}}
---
apiVersion: management.service/v1
kind: OwnedAccessKey
metadata: {name: vic-key}
spec: {user: vic, key: ${vicKey}}
---
apiVersion: management.service/v1
kind: OwnedAccessKey
metadata: {name: admin-teams-only}
spec: {user: admin, key: ${scopedKey}, scope: {rules: [{resources: [{group: management.service, resources: [teams]}]}]}}
`;

describe('the audit trail of a served process', () => {
  let dir: string;
  let served: Served;
  const serve = (...extra: string[]) => startServe(['--store', `sqlite:${join(dir, 'teamkeys.db')}`, '--audit-log', join(dir, 'audit.jsonl'), ...extra], { env: { TEAMKEYS_ADMIN_KEY: adminKey } });
  const as = (key: string, name: string, ...args: string[]) => kubectl(served, args, { kubeconfig: kubeconfigWithToken(served, key, name) });
  // The server took its key from the environment, so its own kubeconfig carries none.
  const admin = (args: string[], input?: string) => kubectl(served, args, { kubeconfig: kubeconfigWithToken(served, adminKey, 'admin'), ...(input ? { input } : {}) });
  const events = (query: string, key = adminKey) => {
    const r = as(key, `reader-${key.slice(0, 4)}`, 'get', '--raw', `/kubernetes/management/apis/audit.management.service/v1/events${query}`);
    return { ...r, items: r.code === 0 ? (JSON.parse(r.stdout) as { items: AuditEvent[] }).items : [] };
  };

  beforeAll(async () => {
    kubectlPath();
    dir = mkdtempSync(join(tmpdir(), 'teamkeys-audit-'));
    served = await serve();
  });
  afterAll(async () => {
    await served.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('records every write with the user and the key, and what it touched', () => {
    expect(admin(['create', '-f', '-'], setup).code).toBe(0);
    expect(admin(['create', '-f', '-'], 'apiVersion: management.service/v1\nkind: Team\nmetadata: {name: sandbox}\nspec: {users: [ana]}\n').code).toBe(0);
    expect(as(olgaKey, 'olga', 'patch', 'team', 'sandbox', '--type=json', '-p', '[{"op":"add","path":"/spec/users/-","value":"mallory"}]').code).toBe(0);
    expect(as(olgaKey, 'olga', 'label', 'team', 'sandbox', 'tier=test').code).toBe(0);
    expect(as(olgaKey, 'olga', 'delete', 'team', 'sandbox').code).toBe(0);
    const { items } = events('?resource=teams&name=sandbox');
    expect(items.map((e) => [e.verb, e.user.username, e.user.keyName, e.fieldManager])).toEqual([
      ['create', 'admin', 'admin', 'kubectl-create'],
      ['patch', 'olga', 'olga-laptop', 'kubectl-patch'],
      ['patch', 'olga', 'olga-laptop', 'kubectl-label'],
      ['delete', 'olga', 'olga-laptop', 'kubectl'],
    ]);
    const [created, patched] = items;
    expect(patched).toMatchObject({
      apiVersion: 'audit.management.service/v1',
      kind: 'Event',
      stage: 'ResponseComplete',
      objectRef: { apiGroup: 'management.service', resource: 'teams', name: 'sandbox', uid: created!.objectRef.uid, resourceVersion: expect.stringMatching(/^\d+$/) },
      fields: { added: ['.spec.users[="mallory"]'] },
      sourceIPs: ['127.0.0.1'],
      stageTimestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(Number(patched!.objectRef.resourceVersion)).toBeGreaterThan(Number(created!.objectRef.resourceVersion));
    // The keys' creation is recorded; their values are nowhere, in the API or in the log file.
    const keys = events('?resource=ownedaccesskeys');
    expect(keys.items.map((e) => [e.verb, e.objectRef.name, e.user.username])).toEqual(expect.arrayContaining([['create', 'olga-laptop', 'admin'], ['create', 'vic-key', 'admin']]));
    expect(keys.stdout).not.toContain(scopedKey);
    const log = readFileSync(join(dir, 'audit.jsonl'), 'utf8');
    for (const secret of [olgaKey, vicKey, adminKey, scopedKey]) {
      expect(keys.stdout).not.toContain(secret);
      expect(log).not.toContain(secret);
    }
    const lines = log.trim().split('\n').map((l) => JSON.parse(l) as AuditEvent);
    expect(lines.filter((e) => e.objectRef.name === 'sandbox').map((e) => e.auditID)).toEqual(items.map((e) => e.auditID));
  });

  it('is readable by management admins only, and never written through the API', () => {
    const refused = events('', vicKey);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('(Forbidden)');
    expect(refused.stderr).toContain('only management admins may read the audit trail');
    expect(events('', olgaKey).code).toBe(1);
    // An admin's key scoped to teams does not reach the trail.
    const scoped = events('', scopedKey);
    expect(scoped.code).toBe(1);
    expect(scoped.stderr).toContain("the access key's scope does not allow this management request");
    const write = admin(['create', '--raw', '/kubernetes/management/apis/audit.management.service/v1/events', '-f', '-'], '{}');
    expect(write.code).toBe(1);
    expect(write.stderr).toContain('MethodNotAllowed');
    const bad = events('?limit=zero');
    expect(bad.stderr).toContain('limit must be a whole number from 1 to 5000, not "zero"');
  });

  it('survives a restart, and is trimmed after its retention period', async () => {
    const before = events('?resource=teams&name=sandbox').items.map((e) => e.auditID);
    expect(before).toHaveLength(4);
    await served.stop();
    served = await serve();
    expect(events('?resource=teams&name=sandbox').items.map((e) => e.auditID)).toEqual(before);
    await served.stop();
    served = await serve('--audit-retention', '6s');
    // Older than six seconds (ten times a quiet machine's write and read back): trimmed when the
    // server starts; a new write is kept, then trimmed too.
    await eventually('old events are trimmed', () => events('?resource=teams&name=sandbox').items.length === 0, 30_000);
    expect(as(olgaKey, 'olga', 'label', 'team', 'ops', 'fresh=yes').code).toBe(0);
    expect(events('?resource=teams&name=ops').items.map((e) => e.fieldManager)).toContain('kubectl-label');
    await eventually('the new event is trimmed in its turn', () => events('?resource=teams&name=ops').items.length === 0, 30_000);
  }, 90_000);
});
