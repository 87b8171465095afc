/**
 * One generated world for the watchers' property: the real server in this process on a loopback
 * port, teams and keys seeded by the administrator, a watch of teams and one of access keys opened
 * over HTTP with every key, then random writes by the administrator. Every event each watcher
 * received is then judged by the oracle at the event's revision.
 */
import fc from 'fast-check';
import pino from 'pino';
import { bootstrapAdmin } from '../../../src/auth/bootstrap.js';
import type { Resource } from '../../../src/auth/roles.js';
import { createRegistry } from '../../../src/registry/registry.js';
import { createAuthContext } from '../../../src/server/auth/auth-context.js';
import { apiPrefix, buildServer } from '../../../src/server/server.js';
import { MemoryStore } from '../../../src/store/backends/memory.js';
import { keySpec, teamField, teamNames, teamSpec, users, type Spec } from '../model/world.js';
import { openWatch, type Arrived, type Watching } from '../../server/watch-client.js';
import { History, readable, watcherAt } from './oracle.js';
import { unusedAdminKeyFile } from '../../support/in-process.js';

const adminKey = `WatchModel${'a'.repeat(40)}`;
const keyValue = (name: string) => `Watcher${name}${'w'.repeat(40)}`.replace(/[^A-Za-z0-9]/g, 'z');
const merge = 'application/merge-patch+json';

/** A write by the administrator; `pick` chooses among the names that exist. */
export type WatchWrite =
  | { op: 'createTeam'; pick: number; spec: Spec }
  | { op: 'patchTeam'; pick: number; field: Spec }
  | { op: 'deleteTeam'; pick: number }
  | { op: 'createKey'; spec: Spec }
  | { op: 'patchKey'; pick: number; patch: Spec }
  | { op: 'deleteKey'; pick: number };

const keyPatch = fc.oneof(
  fc.constant({ disabled: true }),
  // Expired already (created over a second ago, or about to be).
  fc.constant({ ttl: 1, ttlAfterLastActivity: false }),
  fc.constantFrom(...users).map((user) => ({ user, team: null })),
  fc.constantFrom(...teamNames).map((team) => ({ team, user: null })),
  fc.constant({ scope: { rules: [{ verbs: ['get'], resources: [{ group: 'management.service', resources: ['teams'] }] }] } }),
  fc.constant({ scope: null }),
);

const watchWrite: fc.Arbitrary<WatchWrite> = fc.oneof(
  fc.record({ op: fc.constant('createTeam' as const), pick: fc.nat(9), spec: teamSpec }),
  { weight: 5, arbitrary: fc.record({ op: fc.constant('patchTeam' as const), pick: fc.nat(9), field: teamField }) },
  fc.record({ op: fc.constant('deleteTeam' as const), pick: fc.nat(9) }),
  fc.record({ op: fc.constant('createKey' as const), spec: keySpec }),
  { weight: 3, arbitrary: fc.record({ op: fc.constant('patchKey' as const), pick: fc.nat(9), patch: keyPatch }) },
  fc.record({ op: fc.constant('deleteKey' as const), pick: fc.nat(9) }),
);

export const watchScenario = fc.record({
  teams: fc.uniqueArray(fc.record({ name: fc.constantFrom(...teamNames), spec: teamSpec }), { selector: (t) => t.name, minLength: 1, maxLength: 4 }),
  keys: fc.array(keySpec, { minLength: 2, maxLength: 5 }),
  writes: fc.array(watchWrite, { minLength: 1, maxLength: 6 }),
});
export type WatchScenario = typeof watchScenario extends fc.Arbitrary<infer S> ? S : never;

interface Watcher {
  key: string;
  uid: string;
  resource: Resource;
  watch: Watching;
  /** The store's revision when it was opened: its first events are the list at that revision. */
  openedAt: number;
}

export interface WatchFinding {
  key: string;
  resource: Resource;
  event: string;
  why: string;
}

export async function playWatchers(s: WatchScenario): Promise<WatchFinding[]> {
  const store = new MemoryStore();
  const registry = createRegistry(store);
  const log = pino({ level: 'silent' });
  await bootstrapAdmin(registry, { adminKey, keyFile: unusedAdminKeyFile });
  const auth = await createAuthContext(registry, log, { failureLimit: false });
  const app = await buildServer({ registry, auth, logger: log, maintenance: false });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const api = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}${apiPrefix}/apis/management.service/v1`;
  const send = (method: string, path: string, body?: unknown, type = 'application/json') =>
    fetch(`${api}${path}`, {
      method,
      headers: { Authorization: `Bearer ${adminKey}`, ...(body !== undefined ? { 'Content-Type': type } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    }).then((r) => r.arrayBuffer());
  const watchers: Watcher[] = [];
  try {
    for (const t of s.teams) await send('POST', '/teams', { metadata: { name: t.name }, spec: t.spec });
    for (const [i, spec] of s.keys.entries()) await send('POST', '/ownedaccesskeys', { metadata: { name: `k${i}` }, spec: { ...spec, key: keyValue(`k${i}`) } });
    await quiet(watchers, 50);
    const openedAt = await store.currentRevision();
    for (const key of (await registry.ownedaccesskeys.list()).items) {
      if (key.metadata.name === 'admin') continue;
      for (const resource of ['teams', 'ownedaccesskeys'] as const) {
        const watch = await openWatch(`${api}/${resource}?watch=true`, keyValue(key.metadata.name!));
        if (watch.status === 200) watchers.push({ key: key.metadata.name!, uid: key.metadata.uid!, resource, watch, openedAt });
      }
    }
    for (const [i, w] of s.writes.entries()) {
      await apply(w, i);
      await quiet(watchers, 150);
    }
    const findings = await judge(watchers, new History(registry));
    // A key that no longer authenticates has had its watches ended (within a second, and some slack).
    const final = await new History(registry).at(await store.currentRevision());
    const orphans = watchers.filter((w) => !watcherAt(w.key, w.uid, w.resource, final, new Date()));
    const deadline = Date.now() + 1500;
    while (orphans.some((w) => w.watch.endedAt === undefined) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    for (const w of orphans.filter((o) => o.watch.endedAt === undefined)) findings.push({ key: w.key, resource: w.resource, event: '(still open)', why: 'its key no longer authenticates, yet the watch is open' });
    return findings;
  } finally {
    for (const w of watchers) w.watch.close();
    await app.close();
    await store.close();
  }

  async function apply(w: WatchWrite, i: number): Promise<void> {
    const teams = (await registry.teams.list()).items.map((t) => t.metadata.name!);
    const keys = (await registry.ownedaccesskeys.list()).items.map((k) => k.metadata.name!).filter((n) => n !== 'admin');
    const pick = (names: string[], n: number) => names[n % Math.max(names.length, 1)];
    switch (w.op) {
      case 'createTeam': {
        const name = pick(teamNames.filter((n) => !teams.includes(n)), w.pick);
        if (name) await send('POST', '/teams', { metadata: { name }, spec: w.spec });
        return;
      }
      case 'patchTeam': {
        // Every version of a team reads differently, so a departure that carries the new one shows.
        const name = pick(teams, w.pick);
        if (name) await send('PATCH', `/teams/${name}`, { spec: { ...w.field, description: `version ${i}` } }, merge);
        return;
      }
      case 'deleteTeam': {
        const name = pick(teams, w.pick);
        if (name) await send('DELETE', `/teams/${name}`);
        return;
      }
      case 'createKey':
        await send('POST', '/ownedaccesskeys', { metadata: { name: `n${i}` }, spec: w.spec });
        return;
      case 'patchKey': {
        const name = pick(keys, w.pick);
        if (name) await send('PATCH', `/ownedaccesskeys/${name}`, { spec: { ...w.patch, displayName: `version ${i}` } }, merge);
        return;
      }
      case 'deleteKey': {
        const name = pick(keys, w.pick);
        if (name) await send('DELETE', `/ownedaccesskeys/${name}`);
        return;
      }
    }
  }
}

/** Waits until no watcher has received anything for `ms` (bounded to 2 s). */
async function quiet(watchers: Watcher[], ms: number): Promise<void> {
  const count = () => watchers.reduce((n, w) => n + w.watch.events.length, 0);
  const deadline = Date.now() + 2000;
  let seen = -1;
  while (Date.now() < deadline) {
    const now = count();
    if (now === seen) return;
    seen = now;
    await new Promise((r) => setTimeout(r, ms));
  }
}

/** Every event against the oracle: readable at its revision, and a departure carrying the version it could read. */
async function judge(watchers: Watcher[], history: History): Promise<WatchFinding[]> {
  const findings: WatchFinding[] = [];
  for (const w of watchers) {
    for (const e of w.watch.events) {
      const why = await misfit(w, e, history);
      if (why) findings.push({ key: w.key, resource: w.resource, event: `${e.type} ${e.object.metadata?.name ?? ''}@${e.object.metadata?.resourceVersion ?? ''}`, why });
    }
  }
  return findings;
}

async function misfit(w: Watcher, e: Arrived, history: History): Promise<string | undefined> {
  if (e.type === 'ERROR' || e.type === 'BOOKMARK') return undefined;
  const name = e.object.metadata!.name!;
  // The initial list is at the revision the watch was opened at; events after it at their own.
  const revision = Math.max(Number(e.object.metadata!.resourceVersion), w.openedAt);
  // Expiry is a matter of time: a second to notice it.
  const now = new Date(e.at - 1000);
  const at = await history.at(revision);
  const who = watcherAt(w.key, w.uid, w.resource, at, now);
  if (!who) return `sent at revision ${revision}, when key ${w.key} no longer authenticated or could not watch ${w.resource}`;
  const objects = (s: typeof at) => (w.resource === 'teams' ? s.teams : s.keys);
  if (e.type !== 'DELETED') {
    const obj = objects(at).get(name);
    if (!obj || !readable(who, w.resource, obj, at)) return `not readable by ${w.key} at revision ${revision}`;
    return undefined;
  }
  // A departure carries the object as it was before the event, which the reader could read then.
  const before = await history.at(revision - 1);
  const prev = objects(before).get(name);
  const then = watcherAt(w.key, w.uid, w.resource, before, now);
  if (!prev || !then || !readable(then, w.resource, prev, before)) return `the version before revision ${revision} was not readable by ${w.key}`;
  if (JSON.stringify(prev.spec) !== JSON.stringify(e.object.spec)) return `carries another version than the one before revision ${revision} (the one it could read)`;
  return undefined;
}

/** One line per finding, for the failure message. */
export const describeWatchFindings = (fs: WatchFinding[]) => fs.slice(0, 6).map((f) => `${f.key} watching ${f.resource}: ${f.event}: ${f.why}`).join('\n');
