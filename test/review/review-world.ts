/**
 * A random world served by the real server, an access review of it, and every review row checked
 * against what the server answers to a SelfSubjectAccessReview (kubectl auth can-i) sent with a
 * key of that identity: the same decision a real request gets.
 */
import type { KubeObject, OwnedAccessKey, Team } from '../../src/api/types.js';
import type { IdentityEntry, ReviewDocument } from '../../src/review/model.js';
import { computeReview } from '../../src/review/compute.js';
import { startInProcess, type InProcess } from '../server/in-process.js';
import { groups as groupPool, teamNames, users as userPool, type KeySeed, type TeamSeed } from '../auth/model/world.js';

export const allVerbs = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'] as const;
const objectVerbs = ['get', 'list', 'watch', 'update', 'patch', 'delete'] as const;

export interface Served {
  server: InProcess;
  /** Key name -> value, for every key made here (world keys and probes). */
  values: Map<string, string>;
  close(): Promise<void>;
}

const value = (name: string) => `Rev${name}${'x'.repeat(40)}`.replace(/[^A-Za-z0-9]/g, 'z');

async function send(s: Served, method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await s.server.fetch(`${s.server.api}${path}`, {
    method,
    headers: { 'Content-Type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** The world, plus a probe key for every user, group and team of the pools (a key is how can-i is asked). */
export async function serveWorld(teams: TeamSeed[], keys: KeySeed[]): Promise<Served> {
  const server = await startInProcess();
  const s: Served = { server, values: new Map(), close: () => server.close() };
  for (const t of teams) await send(s, 'POST', '/teams', { metadata: { name: t.name }, spec: t.spec });
  const make = async (name: string, spec: object) => {
    const res = await send(s, 'POST', '/ownedaccesskeys', { metadata: { name }, spec: { ...spec, key: value(name) } });
    if (res.status === 201) s.values.set(name, value(name));
  };
  for (const k of keys) await make(k.name, k.spec);
  for (const u of userPool) await make(`probe-user-${u}`, { user: u });
  for (const g of groupPool) await make(`probe-group-${g}`, { subject: `probe-group-${g}`, groups: [g] });
  for (const t of teams) await make(`probe-team-${t.name}`, { team: t.name });
  return s;
}

export async function patch(s: Served, plural: 'teams' | 'ownedaccesskeys', name: string, body: unknown): Promise<number> {
  return (await send(s, 'PATCH', `/${plural}/${name}`, body)).status;
}

/** The review as the CLI computes it, from the objects an administrator lists over HTTP. */
export async function review(s: Served, now = new Date()): Promise<ReviewDocument> {
  const list = async (plural: string) => ((await send(s, 'GET', `/${plural}`)).body.items as KubeObject[]) ?? [];
  return computeReview({ teams: (await list('teams')) as Team[], keys: (await list('ownedaccesskeys')) as OwnedAccessKey[], group: 'management.service', source: s.server.base, now });
}

/** One can-i question: a verb on every object of a kind (no name) or on one named object. */
export interface Question {
  verb: string;
  resource: 'teams' | 'ownedaccesskeys';
  name?: string;
}

/** Every question worth asking in this world: every verb on each kind, and on each Team and key by name. */
export function questions(keys: OwnedAccessKey[]): Question[] {
  const out: Question[] = [];
  for (const verb of allVerbs) out.push({ verb, resource: 'teams' }, { verb, resource: 'ownedaccesskeys' });
  for (const name of teamNames) for (const verb of objectVerbs) out.push({ verb, resource: 'teams', name });
  for (const k of keys) for (const verb of objectVerbs) out.push({ verb, resource: 'ownedaccesskeys', name: k.metadata.name! });
  return out;
}

/** The objects of a review whose rows answer a question (for a key by name, as its owner says). */
export function objectsFor(q: Question, who: Pick<IdentityEntry, 'kind' | 'name'>, keys: Map<string, OwnedAccessKey>): string[] {
  if (q.resource === 'teams') return q.name ? ['teams/*', `teams/${q.name}`] : ['teams/*'];
  if (!q.name) {
    if (q.verb !== 'create') return ['ownedaccesskeys/*'];
    // A create is judged by the new key's content: for the caller, a key of its own.
    const self = who.kind === 'user' ? [`ownedaccesskeys[user=${who.name}]`] : who.kind === 'team' ? [`ownedaccesskeys[team=${who.name}]`] : [];
    return ['ownedaccesskeys/*', ...self];
  }
  const spec = keys.get(q.name)?.spec ?? {};
  return [
    'ownedaccesskeys/*',
    ...(spec.user ? [`ownedaccesskeys[user=${spec.user}]`] : []),
    ...(spec.team ? [`ownedaccesskeys[team=${spec.team}]`, 'ownedaccesskeys[team=*]'] : []),
  ];
}

/** What the review says: whether some row of `who` grants the question. */
export function reviewSays(q: Question, who: IdentityEntry, keys: Map<string, OwnedAccessKey>, owner: Pick<IdentityEntry, 'kind' | 'name'> = who): boolean {
  const objects = objectsFor(q, owner, keys);
  // The open list is a list of every object, filtered: it says nothing of one object by name.
  const speaks = (g: IdentityEntry['grants'][number]) => !(q.name && g.via.some((s) => s.step === 'listed'));
  return who.grants.some((g) => objects.includes(g.object) && (g.verbs as string[]).includes(q.verb) && speaks(g));
}

/** What the server says, to a SelfSubjectAccessReview sent with `key`; undefined when the key does not authenticate. */
export async function serverSays(s: Served, key: string, q: Question): Promise<boolean | undefined> {
  const res = await fetch(`${s.server.base}/kubernetes/management/apis/authorization.k8s.io/v1/selfsubjectaccessreviews`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb: q.verb, group: 'management.service', resource: q.resource, ...(q.name ? { name: q.name } : {}) } } }),
  });
  if (res.status === 401) return undefined;
  if (res.status !== 201) throw new Error(`SelfSubjectAccessReview: ${res.status}`);
  return ((await res.json()) as { status: { allowed: boolean } }).status.allowed;
}

/** Runs `fn` over `items`, `width` at a time. */
export async function inBatches<T, R>(items: T[], width: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += width) out.push(...(await Promise.all(items.slice(i, i + width).map(fn))));
  return out;
}

/** A key to ask with for each identity of the review, and the identity whose rows answer for it. */
export function askers(doc: ReviewDocument, s: Served): { key: string; keyName: string; rows: IdentityEntry; owner: IdentityEntry }[] {
  const byId = new Map(doc.identities.map((i) => [i.id, i]));
  const out: { key: string; keyName: string; rows: IdentityEntry; owner: IdentityEntry }[] = [];
  for (const i of doc.identities) {
    if (i.kind === 'key') continue;
    for (const k of i.keys) {
      const v = s.values.get(k.name);
      if (!v || k.rights === 'none') continue;
      // A key that acts as its identity answers as the identity's rows; one with rights of its own, as its own.
      const rows = k.rights === 'identity' ? i : byId.get(`key:${k.name}`);
      if (rows) out.push({ key: v, keyName: k.name, rows, owner: i });
    }
  }
  return out;
}
