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
import { teamkeys } from '../cli/run.js';

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
});
