/** The discovery documents kubectl reads before anything else: /version, /api, /apis and the group. */
import type { ResourceInfo } from '../api/resources.js';
import { listedGroupNames } from './listed-kinds.js';

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

/**
 * The core (legacy) group's one version. kubectl maps `kind: List` (what `kubectl get -o json`
 * prints) through it: its discovery mapper adds `v1 List` for every version it finds, so without
 * `v1` here `kubectl replace -f` of that output fails with `no matches for kind "List"`.
 */
export const apiVersions = { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] };

function groupVersion(group: string) {
  return { groupVersion: `${group}/v1`, version: 'v1' };
}

export function apiGroup(group: string) {
  return { kind: 'APIGroup', apiVersion: 'v1', name: group, versions: [groupVersion(group)], preferredVersion: groupVersion(group) };
}

/** The groups of kubectl's access questions (auth whoami, auth can-i). */
export const selfSubjectReviewGroupNames = ['authentication.k8s.io', 'authorization.k8s.io'];

/** The kinds' group first, then the groups of kinds listed for kubectl's defaults (listed-kinds.ts), then the review groups. */
export function apiGroupList(group: string) {
  const groups = [group, ...listedGroupNames, ...selfSubjectReviewGroupNames].map((g) => {
    const { kind: _kind, apiVersion: _apiVersion, ...groupBody } = apiGroup(g);
    return groupBody;
  });
  return { kind: 'APIGroupList', apiVersion: 'v1', groups };
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
  if (resources.some((r) => r.plural === 'accessrequests')) entries.push({ name: 'accessrequests/approval', singularName: '', namespaced: false, kind: 'AccessRequest', verbs: ['update'] });
  if (resources.some((r) => r.plural === 'ownedaccesskeys')) entries.push({ name: 'ownedaccesskeys/rotation', singularName: '', namespaced: false, kind: 'KeyRotation', verbs: ['create'] });
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: `${group}/v1`, resources: entries };
}

/** The review resources, as kube-apiserver lists them: created, never stored or read. */
export function selfSubjectReviewResourceList(group: string) {
  const review = (name: string, kind: string): ApiResource => ({ name, singularName: name.slice(0, -1), namespaced: false, kind, verbs: ['create'] });
  const resources =
    group === 'authentication.k8s.io'
      ? [review('selfsubjectreviews', 'SelfSubjectReview')]
      : [review('selfsubjectaccessreviews', 'SelfSubjectAccessReview'), review('selfsubjectrulesreviews', 'SelfSubjectRulesReview')];
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: `${group}/v1`, resources };
}
