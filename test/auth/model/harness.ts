/**
 * The escalation model's harness: the real server (registry, admission, authorizer) in this
 * process on a loopback port, a world seeded by the administrator over HTTP, writes sent over HTTP
 * with the writing key, and every key's effective permissions read with the real Authenticator and
 * Authorizer over a fixed probe set. Only public methods that predate the fix are used, so the same
 * harness runs against an older src/ to show what it finds there.
 */
import pino from 'pino';
import { ActivityRecorder } from '../../../src/auth/activity.js';
import { Authenticator } from '../../../src/auth/authenticate.js';
import type { Identity } from '../../../src/auth/identity.js';
import type { Verb } from '../../../src/auth/roles.js';
import { scopeDenial } from '../../../src/auth/scope.js';
import { impersonationDenial } from '../../../src/auth/impersonation-rights.js';
import { bootstrapAdmin } from '../../../src/auth/bootstrap.js';
import type { KubeObject } from '../../../src/api/types.js';
import type { ResourceRegistry } from '../../../src/registry/resource-registry.js';
import { createRegistry, type Registry } from '../../../src/registry/registry.js';
import { createAuthContext } from '../../../src/server/auth/auth-context.js';
import { apiPrefix, buildServer } from '../../../src/server/server.js';
import { MemoryStore } from '../../../src/store/backends/memory.js';
import { opaqueRoles, teamNames, verbs, type Spec } from './world.js';
import { unusedAdminKeyFile } from '../../support/in-process.js';

const adminKey = `ModelAdmin${'a'.repeat(40)}`;
const log = pino({ level: 'silent' });
const later = 2 * 3600 * 1000;

type Auth = Awaited<ReturnType<typeof createAuthContext>>;

export interface Model {
  registry: Registry;
  auth: Auth;
  /** Key name -> value, for every key the model made. */
  values: Map<string, string>;
  request(method: string, path: string, body: unknown, key: string, type?: string): Promise<{ status: number; body: { message?: string } }>;
  /** The model's clock: the registry's and the server's (request times, authentication); the wall clock until advanced. */
  now(): Date;
  /** Moves the model's clock `ms` on, for good: what ends by time (expiresAt, ttls) ends. */
  advance(ms: number): void;
  /** Runs `fn` with the model's clock `ms` further ahead (a key minted then is created then), and back. */
  ahead<T>(ms: number, fn: () => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export async function startModel(): Promise<Model> {
  // `advanced` moves for good (advance), `shift` for the length of one ahead().
  let advanced = 0;
  let shift = 0;
  const now = () => new Date(Date.now() + advanced + shift);
  const registry = createRegistry(new MemoryStore(), { now });
  await bootstrapAdmin(registry, { adminKey, keyFile: unusedAdminKeyFile });
  const auth = await createAuthContext(registry, log, { failureLimit: false, now });
  // The model runs the garbage collector itself, after each write (reach.ts collect).
  const app = await buildServer({ registry, auth, logger: log, maintenance: false, garbageCollector: false });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}${apiPrefix}/apis/management.service/v1`;
  return {
    registry,
    auth,
    values: new Map([['admin', adminKey]]),
    async request(method, path, body, key, type = 'application/json') {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { Authorization: `Bearer ${key}`, ...(body !== undefined ? { 'Content-Type': type } : {}) },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      return { status: res.status, body: (await res.json()) as { message?: string } };
    },
    now,
    advance(ms) {
      advanced += ms;
    },
    async ahead(ms, fn) {
      shift = ms;
      try {
        return await fn();
      } finally {
        shift = 0;
      }
    },
    close: async () => {
      await app.close();
      await registry.store.close();
    },
  };
}

export const keyValue = (name: string, n: number) => `Model${name}x${n}${'v'.repeat(40)}`.replace(/[^A-Za-z0-9]/g, 'z');

export async function seed(m: Model, teams: { name: string; spec: Spec }[], keys: { name: string; spec: Spec }[]): Promise<void> {
  for (const t of teams) await m.request('POST', '/teams', { metadata: { name: t.name }, spec: t.spec }, adminKey);
  for (const k of keys) {
    const value = keyValue(k.name, 0);
    const res = await m.request('POST', '/ownedaccesskeys', { metadata: { name: k.name }, spec: { ...k.spec, key: value } }, adminKey);
    if (res.status === 201) m.values.set(k.name, value);
  }
  await settled(m);
}

/** Waits until the team index shows every team as stored (bounded). */
export async function settled(m: Model): Promise<void> {
  const deadline = Date.now() + 3000;
  for (;;) {
    const { items } = await m.registry.teams.list();
    const same = items.every((t) => m.auth.teams.get(t.metadata.name!)?.metadata.resourceVersion === t.metadata.resourceVersion);
    const gone = teamNames.every((n) => items.some((t) => t.metadata.name === n) || !m.auth.teams.get(n));
    if (same && gone) return;
    if (Date.now() > deadline) throw new Error('the team index did not catch up');
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** A probe: a verb on one named object (or a name nothing has), or a cluster role. */
export type Probe = string;

async function objects(r: ResourceRegistry): Promise<Map<string, KubeObject>> {
  return new Map((await r.list()).items.map((o) => [o.metadata.name!, o]));
}

/** A real Authenticator on its own clock; its activity recorder writes nothing. */
export function authenticatorAt(m: Model, at: Date): Authenticator {
  const quiet = new ActivityRecorder({ patch: async () => ({}) } as unknown as ResourceRegistry, 1e15, log);
  return new Authenticator(m.registry, m.auth.teams, quiet, () => at);
}

/**
 * What terminating teams still grant, as one line each (the invariant: nothing). A key whose
 * identity counts such a team among its teams (its roles, ownership and rules through it), or
 * holds a verb on one beyond what its roles give everywhere.
 */
export async function terminatingGrants(m: Model, at: Date): Promise<string[]> {
  const authn = authenticatorAt(m, at);
  const terminating = (await m.registry.teams.list()).items.filter((t) => t.metadata.deletionTimestamp);
  if (terminating.length === 0) return [];
  const found: string[] = [];
  for (const [name, value] of m.values) {
    if (name === 'admin') continue;
    const who = await authn.authenticate(`Bearer ${value}`).catch(() => undefined);
    if (!who) continue;
    for (const t of terminating) {
      const team = t.metadata.name!;
      if (who.teams.includes(team)) found.push(`${name} is a member of terminating team ${team}`);
      const everywhere = new Set(verbs.filter((v) => m.auth.authorizer.allowed(who, v as Verb, 'teams', stubTeam('ghost-of-' + team))));
      const extra = verbs.filter((v) => !everywhere.has(v) && m.auth.authorizer.allowed(who, v as Verb, 'teams', t));
      if (extra.length > 0) found.push(`${name} holds ${extra.join(', ')} on terminating team ${team}`);
    }
  }
  return found;
}

const stubTeam = (name: string): KubeObject => ({ apiVersion: 'management.service/v1', kind: 'Team', metadata: { name } });

/** Every key's permissions over the probe set at `at` (or only the keys `only` names): key name -> probes it holds. */
export async function permissions(m: Model, at: Date, keyNames: string[], only?: string[]): Promise<Map<string, Set<Probe>>> {
  const authn = authenticatorAt(m, at);
  const teams = await objects(m.registry.teams);
  const keys = await objects(m.registry.ownedaccesskeys);
  const out = new Map<string, Set<Probe>>();
  for (const name of only ?? new Set([...m.values.keys(), ...keyNames])) {
    const held = new Set<Probe>();
    out.set(name, held);
    let who: Identity;
    try {
      who = await authn.authenticate(`Bearer ${m.values.get(name) ?? ''}`);
    } catch {
      continue; // refused: holds nothing
    }
    // Management roles are their verbs (probed below); a role for clusters elsewhere is probed by name.
    for (const role of opaqueRoles) if (who.clusterRoles.has(role) || who.clusterRoles.has('management-admin')) held.add(`role ${role}`);
    // Acting as any user (the impersonator role), probed as the Impersonate-User headers are decided.
    if (impersonationDenial(who, { resource: 'users', name: 'u1' }) === undefined) held.add('impersonate users');
    const probe = (resource: 'teams' | 'ownedaccesskeys', objName: string, obj: KubeObject | undefined) => {
      const target = obj ?? { apiVersion: 'management.service/v1', kind: resource === 'teams' ? 'Team' : 'OwnedAccessKey', metadata: { name: objName } };
      for (const verb of verbs) {
        const v = verb as Parameters<typeof m.auth.authorizer.allowed>[1];
        const scoped = scopeDenial(who.scope, { verb: v, group: 'management.service', resource, name: objName });
        if (!scoped && m.auth.authorizer.allowed(who, v, resource, target)) held.add(`${verb} ${resource}/${objName}`);
      }
    };
    for (const t of [...teamNames, 'ghost']) probe('teams', t, teams.get(t));
    for (const k of [...new Set([...keys.keys(), ...keyNames]), 'ghost-key']) probe('ownedaccesskeys', k, keys.get(k));
  }
  return out;
}

export interface Violation {
  key: string;
  probe: Probe;
  when: 'now' | 'later';
}

/**
 * The invariant: every permission a key gained through the write is one the writer held before
 * (or, on an object the write created, holds after). Later (past every ttl), only the keys the write
 * created or changed are compared. A team key of a team this write created gains nothing (it was
 * made before its team, or for a team deleted since).
 */
export function violations(
  writer: string,
  before: Map<string, Set<Probe>>,
  after: Map<string, Set<Probe>>,
  opts: {
    when: 'now' | 'later';
    created?: string;
    onlyKeys?: string[];
    revivedTeamKeys?: string[];
    /**
     * A key the write created: its user's keys, and those who may update its team, manage it by
     * rule (they held that over every such key before it existed), so those gains are the rule's.
     */
    createdKey?: { name: string; user?: string; team?: string; users: Map<string, string | undefined> };
  },
): Violation[] {
  const found: Violation[] = [];
  const held = before.get(writer) ?? new Set();
  const heldAfter = after.get(writer) ?? new Set();
  for (const [key, perms] of after) {
    if (opts.onlyKeys && !opts.onlyKeys.includes(key)) continue;
    const had = before.get(key) ?? new Set();
    for (const p of perms) {
      if (had.has(p)) continue;
      const onCreated = opts.created !== undefined && p.endsWith(`/${opts.created}`) && heldAfter.has(p);
      const ck = opts.createdKey;
      const byRule =
        ck !== undefined &&
        p.endsWith(` ownedaccesskeys/${ck.name}`) &&
        ((ck.user !== undefined && ck.users.get(key) === ck.user) || (ck.team !== undefined && had.has(`update teams/${ck.team}`)));
      const revived = opts.revivedTeamKeys?.includes(key) ?? false;
      if (revived || (!held.has(p) && !onCreated && !byRule)) found.push({ key, probe: p, when: opts.when });
    }
  }
  return found;
}

export { later };
