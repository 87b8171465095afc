/**
 * Rules about the access change (docs/gitops.md): a validation reading `access` is judged once per
 * plan against the change, at the rule's own file:line; one whose comprehension merely names a
 * variable `access` is an ordinary object rule.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { AccessChange, AccessEntry } from '../../src/gitops/plan/access-change.js';
import { checkAccessPolicies } from '../../src/gitops/policy/access-policy.js';
import { loadPolicies } from '../../src/gitops/policy/load.js';

const dir = mkdtempSync(join(tmpdir(), 'teamkeys-access-policy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const entry = (e: Partial<AccessEntry>): AccessEntry => ({ identity: 'user:alice', identityKind: 'user', who: 'alice', verb: 'get', resource: 'teams', name: '*', object: 'teams/*', role: '', via: [], ...e });
const change = (gains: AccessEntry[]): AccessChange => ({ identitiesChecked: 1, identitiesChanged: gains.length > 0 ? 1 : 0, gains, losses: [] });

async function policy(expression: string) {
  writeFileSync(join(dir, 'p.yaml'), `apiVersion: gitops.management.service/v1\nkind: Policy\nmetadata: {name: p}\nspec:\n  validations:\n    - expression: ${JSON.stringify(expression)}\n      message: refused\n`);
  const { policies, errors } = await loadPolicies(dir, dir);
  expect(errors).toEqual([]);
  return policies;
}

describe('policies over the access change', () => {
  const groupKeyWrites = "!access.gains.exists(g, g.identityKind == 'group' && g.resource == 'ownedaccesskeys' && g.verb in ['create', 'update', 'patch', 'delete'])";
  it.each([
    ['a management-admin gain', "!access.gains.exists(g, g.resource == 'clusterroles' && g.name == 'management-admin')", [entry({ verb: 'hold', resource: 'clusterroles', name: 'management-admin', object: 'clusterroles/management-admin' })], false],
    ['a teams-viewer gain under the same rule', "!access.gains.exists(g, g.resource == 'clusterroles' && g.name == 'management-admin')", [entry({ verb: 'hold', resource: 'clusterroles', name: 'teams-viewer', object: 'clusterroles/teams-viewer' })], true],
    ['writes on keys to a group', groupKeyWrites, [entry({ identity: 'group:eng', identityKind: 'group', verb: 'update', resource: 'ownedaccesskeys', name: 'team=payments', object: 'ownedaccesskeys[team=payments]' })], false],
    ['reads of keys to a group', groupKeyWrites, [entry({ identity: 'group:eng', identityKind: 'group', verb: 'get', resource: 'ownedaccesskeys', name: 'team=payments', object: 'ownedaccesskeys[team=payments]' })], true],
    ['no change at all', groupKeyWrites, [], true],
  ])('%s', async (_what, expression, gains, allowed) => {
    const errors = checkAccessPolicies(await policy(expression), change(gains as AccessEntry[]), []);
    expect(errors).toEqual(allowed ? [] : [{ file: 'p.yaml', line: 6, column: 19, message: 'the plan\'s access change violates policy "p": refused' }]);
  });

  it('a comprehension variable named access does not make an object rule a rule about the access change', async () => {
    const [p] = await policy('object.spec.access.all(access, access.verbs.size() > 0)');
    expect(p!.validations[0]!.usesAccess).toBe(false);
    expect(checkAccessPolicies([p!], change([entry({})]), [])).toEqual([]);
  });
});
