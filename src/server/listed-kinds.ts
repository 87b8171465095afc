/**
 * Kinds of other groups that this server lists in discovery and answers always empty, because
 * kubectl's defaults need them: `kubectl events` lists core `events`, and `kubectl apply --prune`
 * without `--prune-allowlist` maps every kind of its default allow-list (kubectl's
 * pkg/util/prune: core ConfigMap ... Service, batch Job and CronJob, networking.k8s.io Ingress,
 * apps DaemonSet ... StatefulSet) before it prunes anything, and fails on the first it cannot map.
 * Their lists are empty, so nothing of theirs is ever pruned; any other verb is 405.
 */

export interface ListedKind {
  /** '' for the core group, served under /api/v1; others under /apis/<group>/v1. */
  group: string;
  resource: string;
  kind: string;
  namespaced: boolean;
  /** `get` answers 404 (there is never such an object), `list` and `watch` answer nothing. */
  verbs: string[];
  shortNames?: string[];
}

const prune = ['list'];

export const listedKinds: ListedKind[] = [
  { group: '', resource: 'events', kind: 'Event', namespaced: true, verbs: ['get', 'list', 'watch'], shortNames: ['ev'] },
  { group: '', resource: 'configmaps', kind: 'ConfigMap', namespaced: true, verbs: prune },
  { group: '', resource: 'endpoints', kind: 'Endpoints', namespaced: true, verbs: prune },
  { group: '', resource: 'namespaces', kind: 'Namespace', namespaced: false, verbs: prune },
  { group: '', resource: 'persistentvolumeclaims', kind: 'PersistentVolumeClaim', namespaced: true, verbs: prune },
  { group: '', resource: 'persistentvolumes', kind: 'PersistentVolume', namespaced: false, verbs: prune },
  { group: '', resource: 'pods', kind: 'Pod', namespaced: true, verbs: prune },
  { group: '', resource: 'replicationcontrollers', kind: 'ReplicationController', namespaced: true, verbs: prune },
  { group: '', resource: 'secrets', kind: 'Secret', namespaced: true, verbs: prune },
  { group: '', resource: 'services', kind: 'Service', namespaced: true, verbs: prune },
  { group: 'batch', resource: 'jobs', kind: 'Job', namespaced: true, verbs: prune },
  { group: 'batch', resource: 'cronjobs', kind: 'CronJob', namespaced: true, verbs: prune },
  { group: 'networking.k8s.io', resource: 'ingresses', kind: 'Ingress', namespaced: true, verbs: prune },
  { group: 'apps', resource: 'daemonsets', kind: 'DaemonSet', namespaced: true, verbs: prune },
  { group: 'apps', resource: 'deployments', kind: 'Deployment', namespaced: true, verbs: prune },
  { group: 'apps', resource: 'replicasets', kind: 'ReplicaSet', namespaced: true, verbs: prune },
  { group: 'apps', resource: 'statefulsets', kind: 'StatefulSet', namespaced: true, verbs: prune },
];

/** The named groups among them, each with its one version v1, in the order of first mention. */
export const listedGroupNames = [...new Set(listedKinds.map((k) => k.group).filter((g) => g !== ''))];

export function groupVersionOf(group: string): string {
  return group === '' ? 'v1' : `${group}/v1`;
}

/** The APIResourceList of one listed group's version ('' for the core /api/v1). */
export function listedResourceList(group: string) {
  const resources = listedKinds
    .filter((k) => k.group === group)
    .map((k) => ({
      name: k.resource,
      singularName: k.kind.toLowerCase(),
      namespaced: k.namespaced,
      kind: k.kind,
      verbs: k.verbs,
      ...(k.shortNames ? { shortNames: k.shortNames } : {}),
    }));
  // As kube-apiserver: the core list carries no apiVersion, the named groups' lists do.
  return { kind: 'APIResourceList', ...(group === '' ? {} : { apiVersion: 'v1' }), groupVersion: groupVersionOf(group), resources };
}
