/**
 * The reconciler handles FederatedCredentials as every kind: apply creates, a changed file plans an
 * update, a removed one is pruned, import renders it; a Federated key in git is refused at file:line:col.
 */
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { teamkeys } from '../support/cli.js';
import { newRepo } from '../gitops/git-repo.js';

const rule = (ttl: number) =>
  `apiVersion: management.service/v1\nkind: FederatedCredential\nmetadata:\n  name: payments-main\nspec:\n  issuer: https://token.actions.githubusercontent.com\n  audiences: [teamkeys]\n  claims:\n    repository_id: "1001"\n  team: payments\n  ttl: ${ttl}\n`;

describe('teamkeys plan/apply/prune/import of a FederatedCredential (embedded store)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'teamkeys-fedrec-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const store = ['--store', `sqlite:${join(dir, 'x.db')}`];

  it('creates, updates, prunes and imports it', async () => {
    const repo = await newRepo({ withExamples: false });
    try {
      repo.write('teams/payments.yaml', 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: payments\n');
      repo.write('rules/payments.yaml', rule(900));
      await repo.commit('rule');
      const flags = ['--source', repo.dir, '--source-id', 'ci', ...store];
      const applied = teamkeys(['apply', ...flags]);
      expect(applied.stdout).toContain('+ FederatedCredential/payments-main -> Created  (rules/payments.yaml:1:1)');
      repo.write('rules/payments.yaml', rule(1200));
      await repo.commit('longer');
      expect(teamkeys(['plan', ...flags]).stdout).toMatch(/~ FederatedCredential\/payments-main[\s\S]*spec\.ttl: 900 -> 1200/);
      const out = join(dir, 'imported');
      expect(teamkeys(['import', '--all', '--out', out, ...store]).code).toBe(0);
      expect(existsSync(join(out, 'federatedcredentials/payments-main.yaml')) && readFileSync(join(out, 'federatedcredentials/payments-main.yaml'), 'utf8')).toContain('repository_id: "1001"');
      repo.remove('rules/payments.yaml');
      await repo.commit('gone');
      expect(teamkeys(['apply', '--prune', ...flags]).stdout).toContain('- FederatedCredential/payments-main -> Deleted');
    } finally {
      repo.cleanup();
    }
  });

  it('refuses a Federated key in git at file:line:col', async () => {
    const repo = await newRepo({ withExamples: false });
    try {
      repo.write('keys.yaml', 'apiVersion: management.service/v1\nkind: OwnedAccessKey\nmetadata:\n  name: k\nspec:\n  user: ana\n  type: Federated\n');
      const r = teamkeys(['validate', '--source', repo.dir]);
      expect(r.stdout + r.stderr).toContain('keys.yaml:7:9: spec.type Federated is for keys the token exchange mints for a CI job; declare a FederatedCredential in git instead');
      expect(r.code).toBe(1);
    } finally {
      repo.cleanup();
    }
  });
});
