/** What a delete takes with it through the garbage collector (server/cascade-admission.ts). */
import { cascadeDenial } from '../cascade-admission.js';
import { ownersOf, type AdmissionPlugin } from './chain.js';

export const cascadePlugin: AdmissionPlugin = {
  name: 'cascade',
  admit: (req, ctx) =>
    req.verb === 'delete' && !req.object && req.old ? cascadeDenial(ownersOf(req, ctx), req.resource, req.old, req.propagationPolicy === 'Orphan') : undefined,
};
