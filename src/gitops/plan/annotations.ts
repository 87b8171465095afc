/** The annotations the reconciler reads and writes. */
export const annotations = {
  /** Marks an object as managed by a source (and only such objects may be pruned). */
  source: 'gitops.management.service/source',
  /** `disabled`: never prune this object. */
  prune: 'gitops.management.service/prune',
  /** `replace`: write with PUT instead of a JSON patch. */
  syncStrategy: 'gitops.management.service/sync-strategy',
  /** Comma-separated field paths (`spec.description, metadata.labels.team`) left out of diff and write. */
  ignoreFields: 'gitops.management.service/ignore-fields',
  /** `github:OWNER/REPO/SECRET_NAME`: where the key the server generates for this OwnedAccessKey goes. */
  keySecret: 'gitops.management.service/key-secret',
  /** On a Team: comma-separated cluster roles of clusters elsewhere, which validate accepts though they are no management role. */
  otherClusterRoles: 'gitops.management.service/other-cluster-roles',
  /** Written by the reconciler once the current key reached the key-secret target (its value). */
  keyDelivered: 'gitops.management.service/key-delivered',
} as const;
