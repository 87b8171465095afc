/** The two kinds this API serves, and the names kube clients know them by. */

export const defaultGroup = 'management.service';
export const version = 'v1';
/** Where the API is served below a server's root (teamkeys serve), and what a bare --server URL gets. */
export const apiPrefix = '/kubernetes/management';

export type SchemaId = 'team.schema.json' | 'ownedaccesskey.schema.json';

export interface ResourceInfo {
  group: string;
  version: string;
  /** `group/version`, as objects carry it. */
  apiVersion: string;
  kind: 'Team' | 'OwnedAccessKey';
  listKind: string;
  plural: 'teams' | 'ownedaccesskeys';
  singular: string;
  shortNames: string[];
  schemaId: SchemaId;
}

/** The resources, served under `group` (a setting, so the same code can serve another group name). */
export function resourcesFor(group: string = defaultGroup): { teams: ResourceInfo; ownedaccesskeys: ResourceInfo } {
  const apiVersion = `${group}/${version}`;
  return {
    teams: {
      group,
      version,
      apiVersion,
      kind: 'Team',
      listKind: 'TeamList',
      plural: 'teams',
      singular: 'team',
      shortNames: ['tm'],
      schemaId: 'team.schema.json',
    },
    ownedaccesskeys: {
      group,
      version,
      apiVersion,
      kind: 'OwnedAccessKey',
      listKind: 'OwnedAccessKeyList',
      plural: 'ownedaccesskeys',
      singular: 'ownedaccesskey',
      shortNames: ['oak'],
      schemaId: 'ownedaccesskey.schema.json',
    },
  };
}
