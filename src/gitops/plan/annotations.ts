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
} as const;
