/** What `teamkeys keys` does: flags checked first, then the keys read, filtered, printed. */
import { isJsonMap, type OwnedAccessKey } from '../../api/types.js';
import { keyRow } from '../../auth/key-listing.js';
import { scheduledRotationDue } from '../../gitops/plan/rotation.js';
import { matchesKeyFilter, type KeyFilter } from '../../auth/key-filter.js';
import { systemClock, type Clock } from '../../clock.js';
import { colourOn } from '../colour.js';
import { parseDuration } from '../duration.js';
import { CliError } from '../errors.js';
import type { TargetFlags } from '../gitops-flags.js';
import { parseKeysFormat, renderKeys } from '../keys-output.js';

export interface KeysFlags extends TargetFlags {
  expiring?: string;
  unused?: string;
  user?: string;
  team?: string;
  subject?: string;
  output?: string;
}

/** The filter the flags ask for; a bad value is refused before anything is read. */
export function keyFilterOf(f: KeysFlags): KeyFilter {
  const owners = ([['--user', f.user], ['--team', f.team], ['--subject', f.subject]] as const).filter(([, v]) => v !== undefined);
  // AND of two owners is always empty (a key has exactly one): a mistake worth saying, not an empty list.
  if (owners.length > 1) {
    throw new CliError(`${owners.map(([flag]) => flag).join(' and ')} select different owners and a key has one owner: give one of them (a team member's own keys: --user)`);
  }
  for (const [flag, v] of owners) if (v?.trim() === '') throw new CliError(`${flag} needs a name, not an empty value`);
  return {
    ...(f.expiring !== undefined ? { expiringWithinMs: parseDuration('--expiring', f.expiring) } : {}),
    ...(f.unused !== undefined ? { unusedForMs: parseDuration('--unused', f.unused) } : {}),
    ...(f.user !== undefined ? { user: f.user } : {}),
    ...(f.team !== undefined ? { team: f.team } : {}),
    ...(f.subject !== undefined ? { subject: f.subject } : {}),
  };
}

/**
 * The keys the caller may see: a server's list is already only those (it filters by the caller's
 * rights); the embedded store is read with the rights of whoever can read its file.
 */
async function readKeys(f: KeysFlags): Promise<OwnedAccessKey[]> {
  const { openClient } = await import('../gitops-flags.js');
  const client = await openClient(f, 'keys');
  try {
    // List items need not carry their kind (kube's lists leave it to the list): every item is a key.
    return (await client.list('ownedaccesskeys')).filter((o): o is OwnedAccessKey => isJsonMap(o.spec) && isJsonMap(o.metadata));
  } finally {
    await client.close();
  }
}

export async function runKeys(f: KeysFlags, now: Clock = systemClock): Promise<void> {
  const format = parseKeysFormat(f.output);
  const filter = keyFilterOf(f);
  const keys = await readKeys(f);
  const at = now();
  const rows = keys
    .filter((k) => matchesKeyFilter(k, filter, at))
    .map((k) => ({ ...keyRow(k, at), nextRotationAt: scheduledRotationDue(k)?.toISOString().replace(/\.\d{3}Z$/, 'Z') ?? null }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  console.log(renderKeys(rows, format, format === 'table' && colourOn(process.stdout)));
}
