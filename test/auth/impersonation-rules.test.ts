/**
 * The `impersonate` rules a rules review lists (kubectl auth can-i --list) and the questions an
 * access review reads as impersonation (kubectl auth can-i impersonate users/x), from
 * auth/impersonation-rights.ts, which server/auth/access.ts answers with as they stand.
 */
import { describe, expect, it } from 'vitest';
import { impersonationQuestion, impersonationRules } from '../../src/auth/impersonation-rights.js';

const impersonator = new Set(['impersonator']);

describe('impersonate rules in a rules review', () => {
  it('lists every kind, grouped by API group, for a holder of an impersonating role', () => {
    expect(impersonationRules({ clusterRoles: impersonator })).toEqual([
      { verbs: ['impersonate'], apiGroups: [''], resources: ['users', 'groups'] },
      { verbs: ['impersonate'], apiGroups: ['authentication.k8s.io'], resources: ['uids', 'userextras'] },
    ]);
  });

  it('lists none for an identity without such a role', () => {
    expect(impersonationRules({ clusterRoles: new Set(['teams-admin', 'accesskeys-admin']) })).toEqual([]);
  });

  it('lists only the kinds the key scope allows', () => {
    const scope = { rules: [{ verbs: ['impersonate'], resources: [{ group: '', resources: ['users'] }] }] };
    expect(impersonationRules({ clusterRoles: impersonator, scope })).toEqual([{ verbs: ['impersonate'], apiGroups: [''], resources: ['users'] }]);
  });
});

describe('which access-review questions ask about impersonation', () => {
  it('reads each kind as itself', () => {
    expect(impersonationQuestion({ verb: 'impersonate', group: '', resource: 'groups', name: 'devs' })).toEqual({ resource: 'groups', name: 'devs' });
    expect(impersonationQuestion({ verb: '*', group: 'authentication.k8s.io', resource: 'uids' })).toEqual({ resource: 'uids' });
  });

  it('does not read another core kind (serviceaccounts) as impersonating users', () => {
    expect(impersonationQuestion({ verb: 'impersonate', group: '', resource: 'serviceaccounts', name: 'x' })).toBeUndefined();
  });
});
