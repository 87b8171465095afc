/** The Login-key rules (auth/login-keys.ts): only sign-in makes a Login key or writes its identity. */
import { asKey } from '../../auth/escalation.js';
import { loginKeyWriteRefusal } from '../../auth/login-keys.js';
import type { AdmissionPlugin } from './chain.js';

export const loginKeysPlugin: AdmissionPlugin = {
  name: 'login-keys',
  admit: ({ resource, old, object }) => (resource === 'ownedaccesskeys' && object ? loginKeyWriteRefusal(asKey(old), asKey(object)!) : undefined),
};
