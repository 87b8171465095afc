/** --max-keys-per-user (server/key-quota.ts): a key may not take its identity past the bound. */
import { quotaDenial } from '../key-quota.js';
import type { AdmissionPlugin } from './chain.js';

export const keyQuotaPlugin: AdmissionPlugin = {
  name: 'key-quota',
  // A dry run stores nothing, so it holds no place (a burst of them would refuse one another).
  admit: ({ resource, subresource, old, object, replaces, hold, dryRun }, ctx) =>
    resource === 'ownedaccesskeys' && object && subresource !== 'status' ? quotaDenial(ctx.keyQuota, old, object, replaces, dryRun ? undefined : hold) : undefined,
};
