import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import type { OwnedAccessKey, Team } from '../../src/api/types.js';
import { resourceModels } from '../../src/api/model.js';
import { validateObject } from '../../src/api/validate.js';

const root = new URL('../../', import.meta.url).pathname;

describe('schemas and types', () => {
  it('the committed TypeScript types are exactly what schemas/ generates', () => {
    // Exits non-zero (and this throws) when someone edits a schema without regenerating.
    expect(() => execFileSync(process.execPath, ['scripts/gen-types.mjs', '--check'], { cwd: root, stdio: 'pipe' })).not.toThrow();
  });

  it('the API document example bodies are valid against the schemas', () => {
    const models = resourceModels();
    const team: Team = {
      kind: 'Team',
      apiVersion: 'management.service/v1',
      metadata: { name: 'team-name' },
      spec: {
        clusterRoles: [{ name: 'cluster-role-name' }],
        description: 'text',
        displayName: 'text',
        groups: ['group-name'],
        username: 'team-username',
      },
      status: {},
    };
    const key: OwnedAccessKey = {
      kind: 'OwnedAccessKey',
      apiVersion: 'management.service/v1',
      metadata: { name: 'access-key-name' },
      spec: { displayName: 'text', ttl: 3600, type: 'User', user: 'username' },
      status: {},
    };
    expect(validateObject(models.teams, team)).toEqual([]);
    expect(validateObject(models.ownedaccesskeys, key)).toEqual([]);
  });

  it('declares list semantics for every list the reconciler and managedFields must merge', () => {
    const { teams, ownedaccesskeys } = resourceModels();
    const spec = teams.schema.properties!.spec!.properties!;
    expect(spec.users!['x-kubernetes-list-type']).toBe('set');
    expect(spec.groups!['x-kubernetes-list-type']).toBe('set');
    expect(spec.clusterRoles!['x-kubernetes-list-map-keys']).toEqual(['name']);
    expect(spec.imagePullSecrets!['x-kubernetes-list-type']).toBe('atomic');
    const scope = ownedaccesskeys.schema.properties!.spec!.properties!.scope!.properties!;
    expect(scope.projects!['x-kubernetes-list-map-keys']).toEqual(['project']);
    expect(ownedaccesskeys.secretPaths.map((p) => p.join('.'))).toEqual([
      'spec.key',
      'spec.identity.connectorData',
      'spec.oidcLogin.idToken',
      'spec.oidcLogin.accessToken',
      'spec.oidcLogin.refreshToken',
    ]);
  });
});
