/**
 * kubectl's record of the configuration it last applied: `kubectl apply` (client-side) writes the
 * whole manifest into this annotation, and the server rewrites it after kubectl's server-side apply
 * (registry/server-side-apply.ts). A manifest may set a write-only field (an access key's value),
 * so the record is cut of those fields before anything is stored (secrets.ts, scrubLastApplied):
 * kept in it, the value was shown to every reader of the key, in plain text at rest and in old
 * revisions (found by a review).
 */
export const lastAppliedAnnotation = 'kubectl.kubernetes.io/last-applied-configuration';
