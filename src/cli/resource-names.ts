/** What a user may type for a resource: plural, singular, short name or kind, in any case. */
import { resourcesFor, type ResourceInfo } from '../api/resources.js';
import { CliError } from './errors.js';

export function resolveResource(arg: string, group?: string): ResourceInfo {
  const wanted = arg.toLowerCase();
  for (const info of Object.values(resourcesFor(group))) {
    const names = [info.plural, info.singular, info.kind.toLowerCase(), ...info.shortNames];
    if (names.includes(wanted)) return info;
  }
  throw new CliError(`the server doesn't have a resource type "${arg}" (known: teams, ownedaccesskeys, accessrequests)`);
}
