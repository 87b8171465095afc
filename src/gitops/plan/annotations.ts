import { gitopsSourceAnnotation } from '../../api/gitops-source.js';
import { keyDeliveredAnnotation } from '../../api/key-notices.js';

/** The annotations the reconciler reads and writes. */
export const annotations = {
  /** Marks an object as managed by a source (and only such objects may be pruned). */
  source: gitopsSourceAnnotation,
  /** `disabled`: never prune this object. */
  prune: 'gitops.management.service/prune',
  /** `replace`: write with PUT instead of a JSON patch. */
  syncStrategy: 'gitops.management.service/sync-strategy',
  /** Comma-separated field paths (`spec.description, metadata.labels.team`) left out of diff and write. */
  ignoreFields: 'gitops.management.service/ignore-fields',
  /** Where this OwnedAccessKey's value goes: `github:OWNER/REPO/NAME`, `github-env:OWNER/REPO/ENVIRONMENT/NAME`, `github-org:ORG/NAME` or `file:PATH` (keys/sinks.ts). */
  keySecret: 'gitops.management.service/key-secret',
  /** On a Team: comma-separated cluster roles of clusters elsewhere, which validate accepts though they are no management role. */
  otherClusterRoles: 'gitops.management.service/other-cluster-roles',
  /** Written by the reconciler once the current key reached the key-secret target (its value). */
  keyDelivered: keyDeliveredAnnotation,
  /** A duration (30d): the reconciler rotates the key once its value is older, and delivers the new value to key-secret. */
  rotateEvery: 'gitops.management.service/rotate-every',
  /** A duration (1h): how long the previous value keeps working after the new one was delivered (default defaultRotationOverlap). */
  rotationOverlap: 'gitops.management.service/rotation-overlap',
} as const;

/**
 * The overlap of a scheduled rotation without a rotation-overlap annotation: 6h, the longest a job
 * on a GitHub-hosted runner may run, so a job that read the old secret just before the rotation
 * finishes with it.
 */
export const defaultRotationOverlapMs = 6 * 3_600_000;

/** The shortest rotate-every: a schedule shorter than this would rotate on nearly every run. */
export const minRotateEveryMs = 3_600_000;

/** The longest overlap the server accepts (overlapSeconds 0..2592000). */
export const maxRotationOverlapMs = 30 * 86_400_000;

/**
 * The sink a key with no key-secret has under `apply --key-dir`: its `<name>.key` file, named as a
 * `file:` sink (relative to --key-dir, as every file: path is). apply records key-delivered
 * `pending:` this before the server makes the value and this once the file holds it, so a run that
 * dies (or a write that fails) in between leaves a mark the next plan finds.
 */
export const keyDirSink = (name: string) => `file:${name}.key`;
