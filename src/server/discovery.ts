/** The discovery documents kubectl reads before anything else: /version, /api, /apis and the group. */
import type { ResourceInfo } from '../api/resources.js';

const verbs = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export function versionInfo(packageVersion: string) {
  return {
    major: '1',
    minor: '32',
    gitVersion: `v1.32.0+teamkeys.${packageVersion}`,
    gitCommit: '',
    gitTreeState: 'clean',
    buildDate: '',
    goVersion: '',
    compiler: 'teamkeys',
    platform: `${process.platform}/${process.arch}`,
  };
}

/** This server has no core (legacy) group. */
export const apiVersions = { kind: 'APIVersions', versions: [], serverAddressByClientCIDRs: [] };

function groupVersion(group: string) {
  return { groupVersion: `${group}/v1`, version: 'v1' };
}

export function apiGroup(group: string) {
  return { kind: 'APIGroup', apiVersion: 'v1', name: group, versions: [groupVersion(group)], preferredVersion: groupVersion(group) };
}

export function apiGroupList(group: string) {
  const { kind: _kind, apiVersion: _apiVersion, ...groupBody } = apiGroup(group);
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: [groupBody] };
}

interface ApiResource {
  name: string;
  singularName: string;
  namespaced: boolean;
  kind: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
}

export function apiResourceList(group: string, resources: ResourceInfo[]) {
  const entries: ApiResource[] = resources.flatMap((r): ApiResource[] => [
    { name: r.plural, singularName: r.singular, namespaced: false, kind: r.kind, verbs, shortNames: r.shortNames, categories: ['teamkeys'] },
    { name: `${r.plural}/status`, singularName: '', namespaced: false, kind: r.kind, verbs: ['get', 'patch', 'update'] },
  ]);
  entries.push({ name: 'teams/accesskeys', singularName: '', namespaced: false, kind: 'TeamAccessKeys', verbs: ['get'] });
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: `${group}/v1`, resources: entries };
}
