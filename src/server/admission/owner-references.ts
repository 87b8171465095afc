/** What a write reaches through the garbage collector (server/owner-admission.ts): 403 for the reach, 422 for references by a wrong uid. */
import { ownerReferenceErrorStatus, ownershipDenial } from '../owner-admission.js';
import { ownersOf, type AdmissionPlugin } from './chain.js';

export const ownershipPlugin: AdmissionPlugin = {
  name: 'ownership',
  admit: (req, ctx) => (req.object && req.subresource !== 'status' ? ownershipDenial(ownersOf(req, ctx), req.old, req.object, req.old ?? req.object, req.setsKey === true) : undefined),
};

export const ownerReferencesPlugin: AdmissionPlugin = {
  name: 'owner-references',
  admit: (req, ctx) => (req.object && req.subresource !== 'status' ? ownerReferenceErrorStatus(ownersOf(req, ctx), req.old, req.object) : undefined),
};
