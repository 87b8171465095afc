/**
 * Temporary access end to end against a served process and the CLI: alice asks for payments for 3s
 * (`teamkeys request`), her own approval is refused, bob (the owner) approves (`teamkeys approve`),
 * alice holds what payments members hold, and at expiry she does not, her watch of team keys has
 * ended, the request is Expired, and the Team was never written.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServe, type Served } from '../support/serve-process.js';
import { eventually } from '../support/eventually.js';
import { teamkeys } from '../support/cli.js';

const keyOf = (who: string) => `${who[0]!.toUpperCase()}${who.slice(1)}Cli${'c'.repeat(40)}`;

describe('teamkeys request and approve', () => {
  const dir = mkdtempSync(join(tmpdir(), 'teamkeys-areq-'));
  let served: Served;
  const api = (path: string, who?: string, init: RequestInit = {}) =>
    fetch(`${served.url}/apis/management.service/v1/${path}`, { ...init, headers: { Authorization: `Bearer ${who ? keyOf(who) : served.adminKey}`, 'Content-Type': 'application/json' } });
  const flags = (who: string) => ['--server', served.url, '--token-file', join(dir, `${who}.key`)];

  beforeAll(async () => {
    served = await startServe(['--insecure-http', '--log-level', 'warn']);
    const make = async (path: string, body: unknown) => expect((await api(path, undefined, { method: 'POST', body: JSON.stringify(body) })).status).toBe(201);
    await make('teams', { metadata: { name: 'payments' }, spec: { owner: { user: 'bob' } } });
    await make('teams', { metadata: { name: 'ledger' }, spec: { access: [{ verbs: ['get', 'update'], teams: ['payments'], users: ['bob'] }] } });
    await make('teams', { metadata: { name: 'audit' }, spec: { owner: { user: 'bob' }, accessRequests: { requiredApprovals: 2, approvers: ['carol'] } } });
    for (const who of ['alice', 'bob', 'carol']) {
      await make('ownedaccesskeys', { metadata: { name: `${who}-key` }, spec: { user: who, key: keyOf(who) } });
      writeFileSync(join(dir, `${who}.key`), keyOf(who));
    }
    await make('ownedaccesskeys', { metadata: { name: 'ledger-ci' }, spec: { team: 'ledger' } });
  });
  afterAll(async () => {
    await served?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('alice gains payments for 3s once bob approves, and loses it by herself at expiry', async () => {
    const teamBefore = (await (await api('teams/payments')).json()) as { metadata: { resourceVersion: string } };
    const asked = teamkeys(['request', '--team', 'payments', '--for', '3s', '--reason', 'INC-1234', ...flags('alice')]);
    expect(asked.stderr).toBe('');
    expect(asked.code).toBe(0);
    const name = asked.stdout.trim();
    expect(name).toMatch(/^payments-[a-z0-9]{5}$/);
    expect((await api('teams/ledger', 'alice')).status).toBe(403);

    const self = teamkeys(['approve', name, ...flags('alice')]);
    expect(self.code).not.toBe(0);
    expect(self.stderr).toContain('cannot update resource "accessrequests/approval"');

    const approved = teamkeys(['approve', name, ...flags('bob')]);
    expect(approved.stderr).toBe('');
    expect(approved.stdout).toMatch(new RegExp(`^accessrequest.management.service/${name} approved: Active until \\S+Z\\n$`));
    expect((await api('teams/ledger', 'alice')).status).toBe(200);
    const watch = await api('ownedaccesskeys?watch=true', 'alice');
    expect(watch.status).toBe(200);
    const body = watch.text();

    await eventually('alice can no longer read ledger', async () => (await api('teams/ledger', 'alice')).status === 403);
    const lines = (await body).trim().split('\n').map((l) => JSON.parse(l) as { type: string; object: { metadata?: { name?: string }; code?: number } });
    expect(lines.filter((l) => l.type === 'ADDED').map((l) => l.object.metadata?.name)).toContain('ledger-ci');
    expect(lines.at(-1)).toMatchObject({ type: 'ERROR', object: { code: 410 } });
    const phase = await eventually('the request is recorded Expired', async () => {
      const got = teamkeys(['get', 'accessrequests', name, '-o', 'json', ...flags('alice')]);
      const p = (JSON.parse(got.stdout) as { status: { phase: string } }).status.phase;
      return p === 'Expired' ? p : undefined;
    });
    expect(phase).toBe('Expired');
    const teamAfter = (await (await api('teams/payments')).json()) as { metadata: { resourceVersion: string } };
    expect(teamAfter.metadata.resourceVersion).toBe(teamBefore.metadata.resourceVersion);
  }, 30_000);

  it('an approval that leaves the request Pending says how many of the required approvals count, and whose', async () => {
    const name = teamkeys(['request', '--team', 'audit', '--for', '1h', '--reason', 'INC-77', ...flags('alice')]).stdout.trim();
    const first = teamkeys(['approve', name, ...flags('bob')]);
    expect([first.code, first.stdout]).toEqual([0, `accessrequest.management.service/${name} approved: Pending (1 of 2 required approvals count: bob)\n`]);
    const second = teamkeys(['approve', name, ...flags('carol')]);
    expect(second.stdout).toMatch(new RegExp(`^accessrequest.management.service/${name} approved: Active until \\S+Z\\n$`));
  });
});
