/**
 * review-ops: two keys (of different users) may name the same sink. Each rotation or delivery
 * overwrites the other's value: the consumers of the secret flip between two identities, and the
 * key that lost its secret is rotated (its old value revoked) with nobody holding the new one. A
 * manifest author adding their own key can take over a sink another team's CI reads.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { teamkeys } from '../support/cli.js';
import { resourceModels } from '../../src/api/model.js';
import { validateManifests } from '../../src/gitops/validate.js';

describe('one sink, two keys', () => {
  it('validate refuses two keys delivered to the same sink', () => {
    const dir = mkdtempSync(join(tmpdir(), 'review-ops-dup-'));
    for (const n of ['a', 'b']) {
      writeFileSync(join(dir, `${n}.yaml`), `apiVersion: management.service/v1\nkind: OwnedAccessKey\nmetadata:\n  name: key-${n}\n  annotations:\n    gitops.management.service/key-secret: github:acme/payments/DEPLOY_KEY\nspec:\n  user: user-${n}\n`);
    }
    const r = teamkeys(['validate', dir], { cwd: dir });
    expect(r.code).toBe(1);
    expect(r.stdout + r.stderr).toContain('github:acme/payments/DEPLOY_KEY');
    // At the second key's annotation, naming the first.
    expect(r.stdout + r.stderr).toContain('b.yaml:6:43: gitops.management.service/key-secret github:acme/payments/DEPLOY_KEY is also the sink of OwnedAccessKey/key-a (a.yaml:1:1)');
  });

  it('refuses two keys naming one GitHub secret in different letter case (GitHub compares names without case)', () => {
    const key = (name: string, file: string, sink: string) => {
      const object = { apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', metadata: { name, annotations: { 'gitops.management.service/key-secret': sink } }, spec: { user: `user-${name}` } };
      return { file, line: 1, column: 1, object, locate: () => ({ file, line: 6, column: 43 }) };
    };
    const { desired, errors } = validateManifests(
      [key('key-a', 'a.yaml', 'github:acme/payments/DEPLOY_KEY'), key('key-b', 'b.yaml', 'github:ACME/Payments/deploy_key')],
      Object.values(resourceModels()),
    );
    expect(errors.map((e) => `${e.file}:${e.line}:${e.column}: ${e.message}`)).toEqual([
      'b.yaml:6:43: gitops.management.service/key-secret github:ACME/Payments/deploy_key is also the sink of OwnedAccessKey/key-a (a.yaml:1:1): one sink holds one key\'s value',
    ]);
    expect(desired.map((d) => d.obj.metadata.name)).toEqual(['key-a']);
  });

  it("refuses a file: sink naming another key's --key-dir file (a key without key-secret goes to <name>.key), in either order", () => {
    const key = (name: string, file: string, sink?: string) => {
      const object = { apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', metadata: { name, ...(sink ? { annotations: { 'gitops.management.service/key-secret': sink } } : {}) }, spec: { user: `user-${name}` } };
      return { file, line: 1, column: 1, object, locate: (path: string) => ({ file, line: path === 'metadata.name' ? 4 : 6, column: path === 'metadata.name' ? 9 : 43 }) };
    };
    const models = Object.values(resourceModels());
    const declaredFirst = validateManifests([key('a', 'a.yaml', 'file:./b.key'), key('b', 'b.yaml')], models);
    expect(declaredFirst.errors.map((e) => `${e.file}:${e.line}:${e.column}: ${e.message}`)).toEqual([
      "b.yaml:4:9: without gitops.management.service/key-secret this key's value goes to b.key in --key-dir, which is also the sink of OwnedAccessKey/a (a.yaml:1:1): one sink holds one key's value",
    ]);
    const implicitFirst = validateManifests([key('b', 'b.yaml'), key('a', 'a.yaml', 'file:b.key')], models);
    expect(implicitFirst.errors.map((e) => `${e.file}:${e.line}:${e.column}: ${e.message}`)).toEqual([
      "a.yaml:6:43: gitops.management.service/key-secret file:b.key is also the sink of OwnedAccessKey/b (b.yaml:1:1, its --key-dir file: it has no gitops.management.service/key-secret): one sink holds one key's value",
    ]);
    // Its own file by name is no clash, and keys without key-secret never clash with each other.
    expect(validateManifests([key('a', 'a.yaml', 'file:a.key'), key('b', 'b.yaml'), key('c', 'c.yaml')], models).errors).toEqual([]);
  });
});

