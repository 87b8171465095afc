/**
 * `teamkeys import` leaves out key-delivered, the reconciler's record of a delivery: every key made
 * by `apply --key-dir` carries it (issue 41), and validate refuses it in git, so an imported key
 * must not bring it along.
 */
import { describe, expect, it } from 'vitest';
import { manifestOf } from '../../src/gitops/import.js';

describe('import and the key-delivered record', () => {
  it.each([
    ['a --key-dir key', { 'gitops.management.service/key-delivered': 'file:ci.key' }, undefined],
    ['a key whose file is still pending', { 'gitops.management.service/key-delivered': 'pending:file:ci.key' }, undefined],
    ['a key with a sink', { 'gitops.management.service/key-delivered': 'github:acme/app/CI_KEY', 'gitops.management.service/key-secret': 'github:acme/app/CI_KEY' }, { 'gitops.management.service/key-secret': 'github:acme/app/CI_KEY' }],
  ])('%s is imported without key-delivered', (_what, annotations, kept) => {
    const live = { apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', metadata: { name: 'ci', annotations }, spec: { user: 'ana' } };
    expect(manifestOf(live).metadata.annotations).toEqual(kept);
  });
});
