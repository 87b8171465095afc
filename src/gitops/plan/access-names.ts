/**
 * What a pull request's access change may name (pull-request mode): the names the source's own
 * manifests hold, and the names a change's object and paths would show.
 */
import type { KubeObject } from '../../api/types.js';
import type { Step } from '../../review/model.js';

/** The names a path shows: teams, users and keys of its steps. */
export function stepNames(path: Step[]): string[] {
  return path.flatMap((s) => [s.step === 'member' || s.step === 'role' || s.step === 'teamKeys' ? s.team : undefined, s.step === 'owner' || s.step === 'access' ? s.of : undefined, 'user' in s ? s.user : undefined, 'team' in s && s.step !== 'teamKeys' ? s.team : undefined, s.step === 'scope' ? s.key : undefined, s.step === 'member' && s.by.startsWith('group:') ? s.by.slice(6) : undefined].filter((n): n is string => n !== undefined && n !== '*'));
}

/** The names an object shows: a Team's, or the team or user whose keys it is. */
export function objectNames(object: string): string[] {
  const m = /^teams\/(.+)$|^ownedaccesskeys\[(?:team|user)=(.+)\]$/.exec(object);
  const n = m?.[1] ?? m?.[2];
  return n && n !== '*' ? [n] : [];
}

/** The names a source's objects hold (names, members, owners, rules, keys' users and teams): what a pull request may show. */
export function namedIn(desired: { obj: KubeObject }[]): (name: string) => boolean {
  const names = new Set<string>();
  const walk = (v: unknown): void => {
    if (typeof v === 'string') names.add(v);
    else if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  for (const d of desired) {
    names.add(d.obj.metadata.name!);
    walk(d.obj.spec);
  }
  return (name) => names.has(name);
}
