/**
 * The annotation that hands an object to a GitOps source (gitops/plan/annotations.ts reads and
 * writes it): that source's `apply --prune` deletes the object once git no longer holds it. Here,
 * in the API's vocabulary, because the server judges who may set it (server/admission/gitops-source.ts).
 */
export const gitopsSourceAnnotation = 'gitops.management.service/source';
