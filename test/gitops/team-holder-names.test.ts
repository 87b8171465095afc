/**
 * A key's user named like a team's keys (`team:<name>`) is refused by the server where it is new
 * (test/server/team-holder-names.test.ts). The reconciler judges it the same way, against the live
 * object: a repository declaring a key stored so before the rule still applies (a review found
 * every reconcile of such a repository refused, unrelated changes included); a new such name is an
 * error at its file:line:col, and nothing is written.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/client/http.js';
import { reconcile } from '../../src/gitops/reconcile.js';
import type { StoredObject } from '../../src/store/types.js';
import { adminKey, startInProcess, type InProcess } from '../support/in-process.js';
import { teamkeys } from '../support/cli.js';

describe('keys for users named team:<name>, declared in git', () => {
  let server: InProcess;
  let source: string;
  let client: HttpClient;
  const run = () => reconcile({ mode: 'apply', client, source: { source, sourceId: 'legacy-keys' }, prune: false, allowEmpty: false, maxPrune: 10, concurrency: 2 }).then((r) => r.report);
  const key = (name: string, user: string) => `apiVersion: management.service/v1\nkind: OwnedAccessKey\nmetadata:\n  name: ${name}\nspec:\n  user: ${user}\n  ttl: 600\n`;

  beforeAll(async () => {
    server = await startInProcess({});
    source = mkdtempSync(join(tmpdir(), 'teamkeys-holder-names-'));
    client = new HttpClient({ server: server.base, token: adminKey });
    // Stored before the rule (past the API, as an older server wrote it).
    await server.registry.ownedaccesskeys.ctx.store.create('/ownedaccesskeys/old-odd', { apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', metadata: { name: 'old-odd', uid: 'uid-old-odd', creationTimestamp: '2026-11-01T00:00:00Z' }, spec: { user: 'team:legacy', key: `Old${'o'.repeat(45)}`, ttl: 600 } } as unknown as StoredObject);
  });
  afterAll(async () => {
    await client.close();
    await server.close();
    rmSync(source, { recursive: true, force: true });
  });

  it('a key stored so before is declared and applied, beside unrelated changes', async () => {
    writeFileSync(join(source, 'keys.yaml'), key('old-odd', 'team:legacy'));
    writeFileSync(join(source, 'team.yaml'), 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: other\nspec: {}\n');
    const report = await run();
    expect(report.errors).toEqual([]);
    expect(report.outcome).not.toBe('invalid');
    expect((await server.fetch(`${server.api}/teams/other`)).status).toBe(200);
  });

  it('teamkeys validate, which reads no server, warns of each such name and leaves the verdict to plan', () => {
    const dir = mkdtempSync(join(tmpdir(), 'teamkeys-holder-validate-'));
    try {
      writeFileSync(join(dir, 'keys.yaml'), key('fresh', 'team:payments'));
      for (const target of [dir, join(dir, 'keys.yaml')]) {
        const r = teamkeys(['validate', target], { cwd: dir });
        expect(r.code, r.stderr).toBe(0);
        expect(`${r.stdout}${r.stderr}`).toContain('keys.yaml:6:9: warning: spec.user: Invalid value: "team:payments": may not begin with "team:": that is how the keys of a team are named as their holder; set spec.team for a team\'s key (unless the server\'s object of this name already has it: plan judges it against the live object)');
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a new key so named is an error at the field, and nothing is written', async () => {
    writeFileSync(join(source, 'new.yaml'), `${key('fresh', 'team:payments')}---\napiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: another\nspec: {}\n`);
    const report = await run();
    expect(report.outcome).toBe('invalid');
    expect(report.errors).toEqual([expect.objectContaining({ file: 'new.yaml', line: 6, message: 'spec.user: Invalid value: "team:payments": may not begin with "team:": that is how the keys of a team are named as their holder; set spec.team for a team\'s key' })]);
    expect((await server.fetch(`${server.api}/ownedaccesskeys/fresh`)).status).toBe(404);
    expect((await server.fetch(`${server.api}/teams/another`)).status).toBe(404);
  });
});
