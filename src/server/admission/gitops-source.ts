/**
 * Setting `gitops.management.service/source` on an object (or changing it) hands the object to that
 * GitOps source, whose `apply --prune` deletes it once git no longer holds it: it needs delete on
 * the object. Before, anyone who could update a team could name a source on it and have the next
 * pruning apply delete the team, its keys with it (found by a review). Removing the annotation
 * takes the object away from pruning, and needs nothing more than the update.
 */
import { gitopsSourceAnnotation } from '../../api/gitops-source.js';
import { mayDelete } from '../owner-admission.js';
import { ownersOf, type AdmissionPlugin } from './chain.js';

export const gitopsSourcePlugin: AdmissionPlugin = {
  name: 'gitops-source',
  admit: (req, ctx) => {
    const { verb, resource, old, object } = req;
    if (!object || verb === 'delete') return undefined;
    const now = object.metadata.annotations?.[gitopsSourceAnnotation];
    if (now === undefined || now === old?.metadata.annotations?.[gitopsSourceAnnotation]) return undefined;
    if (mayDelete(ownersOf(req, ctx), resource, old ?? object)) return undefined;
    return `setting the ${gitopsSourceAnnotation} annotation hands this object to a GitOps source, whose apply --prune deletes it once git no longer holds it: that needs delete on it`;
  },
};
