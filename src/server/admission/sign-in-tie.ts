/**
 * The sign-in tie (registry/sign-in-tie.ts): a key written by a key-setting write with a Login key
 * (or a key tied to one) ends with that sign-in, whatever the verb. The registry sets the tie; this
 * plugin refuses a write that would carry the key on without it (fail closed, should a write path
 * forget it), and the removal of a tie by anyone but an accesskeys-admin.
 */
import { sameReference, signInTieDenial, signInTieOf } from '../owner-admission.js';
import { ownersOf, type AdmissionPlugin } from './chain.js';
import { ownerReferencesOf } from '../../api/owner-references.js';
import { valueSetByAnnotation } from '../../api/key-types.js';
import { holderMoved } from '../../registry/keys.js';

export const signInTiePlugin: AdmissionPlugin = {
  name: 'sign-in-tie',
  admit: async (req, ctx) => {
    const { resource, object, setsKey } = req;
    if (resource !== 'ownedaccesskeys' || !object || req.subresource === 'status') return undefined;
    const owners = ownersOf(req, ctx);
    const tie = signInTieOf(owners);
    if (setsKey && tie && object.metadata.uid !== tie.uid && !ownerReferencesOf(object.metadata).some((r) => sameReference(r, tie))) {
      return 'a key written, rotated or enabled with a Login key must end with that sign-in, and this write would not tie it';
    }
    // Who set the key's value is the server's record (registry/keys.ts recordValueSetter): a write that
    // sets no value and moves no key may not change it, or a key-maker could claim the user set it (and ride on its
    // temporary access: auth/temporary-access.ts grantsCarried).
    const setter = (o: typeof object | undefined) => o?.metadata.annotations?.[valueSetByAnnotation];
    if (!setsKey && req.old && !holderMoved(req.old, object) && setter(req.old) !== setter(object)) return `the annotation ${valueSetByAnnotation} is written by the server, when a write sets the key's value`;
    return signInTieDenial(owners, req.old, object);
  },
};
