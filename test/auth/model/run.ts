/** Plays one scenario of the escalation model against a fresh server; returns what broke the invariant. */
import { keyValue, later, permissions, seed, settled, startModel, terminatingGrants, violations, type Model, type Violation } from './harness.js';
import { collect, reachViolations, resolveMeta, snapshot, type Stored } from './reach.js';
import { disabledKeys, keySettingWrite, loginKeys, outlivingSignIn, serverAct, signInOf, type Written } from './sign-in.js';
import { teamNames, type Scenario, type Write } from './world.js';
import { isApprover } from '../../../src/api/access-request.js';
import { mintedBeyondWriter, seedRules, sendRuleWrite } from './federation.js';

export interface Finding extends Violation {
  writer: string;
  write: Write;
  status: number;
}

const merge = 'application/merge-patch+json';

/** The names of `resource` the writer may `verb`, else every name: where a write is worth trying. */
function choose(perms: Set<string>, verb: string, resource: string, all: string[], pick: number): string {
  const allowed = all.filter((n) => perms.has(`${verb} ${resource}/${n}`));
  const from = allowed.length > 0 ? allowed : all;
  return from[pick % from.length]!;
}

/** Sends one write; returns its status and which key it created or changed (if any). */
async function send(m: Model, writer: string, w: Write, perms: Set<string>, n: number, live: Map<string, Stored>): Promise<{ status: number; key?: string; created?: string; rule?: string }> {
  const as = m.values.get(writer)!;
  const keys = [...m.values.keys()];
  switch (w.op) {
    case 'createTeam': {
      // A name no team has: creating one that exists is a plain 409.
      const absent = teamNames.filter((n) => !m.auth.teams.get(n));
      const name = (absent.length > 0 ? absent : teamNames)[w.pick % (absent.length || teamNames.length)]!;
      // A team that owns itself gives its members (and keys) every verb on it.
      const spec = w.ownsItself ? { ...w.spec, owner: { team: name } } : w.spec;
      const meta = w.meta ? resolveMeta(w.meta, live, perms) : {};
      return { status: (await m.request('POST', '/teams', { metadata: { name, ...meta }, spec }, as)).status, created: name };
    }
    case 'patchTeam':
      return { status: (await m.request('PATCH', `/teams/${choose(perms, 'patch', 'teams', teamNames, w.pick)}`, w.patch, as, merge)).status };
    case 'deleteTeam':
      return { status: (await m.request('DELETE', `/teams/${choose(perms, 'delete', 'teams', teamNames, w.pick)}?propagationPolicy=${w.policy}`, undefined, as)).status };
    case 'createKey': {
      const name = `n${n}`;
      const value = keyValue(name, n);
      const own = w.forSelf ? await m.registry.ownedaccesskeys.get(writer).catch(() => undefined) : undefined;
      const self = (own?.spec as { user?: string } | undefined)?.user;
      const spec = self ? { ...w.spec, user: self, team: undefined } : w.spec;
      const meta = w.meta ? resolveMeta(w.meta, live, perms) : {};
      const res = await m.request('POST', '/ownedaccesskeys', { metadata: { name, ...meta }, spec: { ...spec, key: value } }, as);
      if (res.status === 201) m.values.set(name, value);
      return { status: res.status, key: name, created: name };
    }
    case 'patchKey': {
      const key = choose(perms, 'patch', 'ownedaccesskeys', keys, w.pick);
      return { status: (await m.request('PATCH', `/ownedaccesskeys/${key}`, w.patch, as, merge)).status, key };
    }
    case 'deleteKey': {
      const key = choose(perms, 'delete', 'ownedaccesskeys', keys, w.pick);
      return { status: (await m.request('DELETE', `/ownedaccesskeys/${key}?propagationPolicy=${w.policy}`, undefined, as)).status };
    }
    case 'requestAccess': {
      const spec = { team: w.team, duration: w.duration, reason: 'model', ...(w.forUser ? { user: w.forUser } : {}) };
      return { status: (await m.request('POST', '/accessrequests', { apiVersion: 'management.service/v1', kind: 'AccessRequest', metadata: { name: `r${n}` }, spec }, as)).status };
    }
    case 'approveRequest': {
      const pending = (await m.registry.accessrequests.list()).items.filter((r) => (r.status as { phase?: string } | undefined)?.phase === 'Pending');
      if (pending.length === 0) return { status: 404 };
      // Among the requests the writer may approve, if any (as choose() does), so approvals get tried.
      const who = await m.auth.authenticator.reauthenticate(`Bearer ${as}`).then((r) => r.identity, () => undefined);
      const mine = pending.filter((r) => who && isApprover(m.auth.teams.get((r.spec as { team: string }).team), who.user, who.teams));
      const from = mine.length > 0 ? mine : pending;
      const req = from[w.pick % from.length]!;
      const body = { ...req, status: { conditions: [{ type: 'Approved', status: 'True' }] } };
      return { status: (await m.request('PUT', `/accessrequests/${req.metadata.name}/approval`, body, as)).status };
    }
    case 'createRule':
    case 'patchRule':
    case 'deleteRule':
      return sendRuleWrite(m, writer, w, perms, n);
    case 'setKeyValue':
    case 'reEnable':
      return keySettingWrite(m, writer, w, perms, n);
    case 'signIn':
    case 'endSignIn':
      throw new Error(`${w.op} is the server's act, not a key's write`);
    case 'patchMeta': {
      // Where the writer may patch (not necessarily delete): the writes issue 24 is about.
      const name = choose(perms, 'patch', w.plural, w.plural === 'teams' ? teamNames : keys, w.pick);
      const meta = resolveMeta(w.meta, live, perms);
      const patch = { metadata: { ownerReferences: meta.ownerReferences, finalizers: w.dropFinalizers ? null : (meta.finalizers ?? null) } };
      return { status: (await m.request('PATCH', `/${w.plural}/${name}`, patch, as, merge)).status, ...(w.plural === 'ownedaccesskeys' ? { key: name } : {}) };
    }
  }
}

/** Whether a write, accepted, made the key usable by whoever wrote it (src/registry/key-setting.ts): the model's own judgement. */
const keySetting = (w: Write, key: string, disabledBefore: string[]) =>
  w.op === 'createKey' || w.op === 'setKeyValue' || w.op === 'reEnable' || (w.op === 'patchKey' && (w.patch.spec as { disabled?: boolean } | undefined)?.disabled === false && disabledBefore.includes(key));

export async function play(s: Scenario): Promise<Finding[]> {
  const m = await startModel();
  try {
    await seed(m, s.world.teams, s.world.keys);
    await seedRules(m, s.world.rules ?? []);
    const findings: Finding[] = [];
    /** The keys written with a sign-in by a key-setting write, and the Login keys they must end with. */
    const tied: Written = new Map();
    const ending = async (write: Write, writer: string, status: number) =>
      (await outlivingSignIn(m, tied)).map((probe) => ({ key: writer, probe, when: 'now' as const, writer, write, status }));
    for (const [i, { by, bySignIn, write }] of s.writes.entries()) {
      if (write.op === 'signIn' || write.op === 'endSignIn') {
        await serverAct(m, write, i);
        await collect(m);
        await settled(m);
        findings.push(...(await ending(write, 'server', 200)));
        if (findings.length > 0) break;
        continue;
      }
      const now = new Date();
      const then = new Date(now.getTime() + later);
      const names = [`n${i}`];
      const [beforeNow, beforeLater] = [await permissions(m, now, names), await permissions(m, then, names)];
      // Writers are keys that still work (the administrator holds everything and proves nothing).
      const keys = [...m.values.keys()].filter((k) => k !== 'admin' && (beforeNow.get(k)?.size ?? 0) > 0);
      if (keys.length === 0) break;
      const live = await snapshot(m);
      const logins = await loginKeys(m);
      const signedIn = bySignIn ? keys.filter((k) => logins.includes(k) || tied.has(k)) : [];
      const pool = signedIn.length > 0 ? signedIn : keys;
      const writer = pool[by % pool.length]!;
      // Without a Login key in the world (the plain scenarios) no write is made with a sign-in.
      const tie = logins.length > 0 ? await signInOf(m, writer) : undefined;
      const teamKeysBefore = write.op === 'createTeam' ? await teamKeysOf(m) : [];
      const disabledBefore = tie ? await disabledKeys(m) : [];
      const { status, key, created, rule } = await send(m, writer, write, beforeNow.get(writer) ?? new Set(), i, live);
      if (status < 200 || status > 299) continue;
      // A key-setting write with a sign-in ties the key to it; a metadata patch may cut a tie (an accesskeys-admin's right).
      if (key && write.op === 'patchMeta') tied.delete(key);
      if (key && tie && key !== tie && keySetting(write, key, disabledBefore)) tied.set(key, new Set([...(tied.get(key) ?? []), tie]));
      const written = await snapshot(m);
      await collect(m);
      await settled(m);
      const [afterNow, afterLater] = [await permissions(m, now, names), await permissions(m, then, names)];
      const reach = reachViolations(live, written, await snapshot(m), beforeNow.get(writer), afterNow.get(writer));
      findings.push(...reach.map((r) => ({ key: writer, probe: r.probe, when: 'now' as const, writer, write, status })));
      // A terminating team grants nothing, to anyone (issue 24).
      findings.push(...(await terminatingGrants(m, now)).map((probe) => ({ key: writer, probe, when: 'now' as const, writer, write, status })));
      const createdKey = write.op === 'createKey' ? await createdKeyOf(m, key!) : undefined;
      const found = [
        ...violations(writer, beforeNow, afterNow, { when: 'now', ...(created ? { created } : {}), revivedTeamKeys: teamKeysBefore, ...(createdKey ? { createdKey } : {}) }),
        ...(key ? violations(writer, beforeLater, afterLater, { when: 'later', onlyKeys: [key], ...(created ? { created } : {}) }) : []),
      ];
      findings.push(...found.map((f) => ({ ...f, writer, write, status })));
      // Nothing outlives expiresAt: an approval (every request in the model ends within 2h) adds nothing at `then`.
      if (write.op === 'approveRequest') {
        for (const [k, held] of afterLater) for (const probe of held) if (!beforeLater.get(k)?.has(probe)) findings.push({ key: k, probe, when: 'later', writer, write, status });
      }
      // What the rule now mints holds nothing its writer did not (issue 34).
      if (rule && write.op !== 'deleteRule') {
        const before = { now: beforeNow.get(writer) ?? new Set<string>(), later: beforeLater.get(writer) ?? new Set<string>() };
        findings.push(...(await mintedBeyondWriter(m, writer, rule, before)).map((f) => ({ ...f, writer, write, status })));
      }
      findings.push(...(await ending(write, writer, status)));
      if (findings.length > 0) break;
    }
    return findings;
  } finally {
    await m.close();
  }
}

/** The key a write created, with the user of every key (for the rules that manage keys). */
async function createdKeyOf(m: Model, name: string) {
  const { items } = await m.registry.ownedaccesskeys.list();
  const specOf = (k: (typeof items)[number]) => k.spec as { user?: string; team?: string };
  const users = new Map(items.map((k) => [k.metadata.name!, specOf(k).user]));
  const created = items.find((k) => k.metadata.name === name);
  const spec = created ? specOf(created) : {};
  return { name, users, ...(spec.user ? { user: spec.user } : {}), ...(spec.team ? { team: spec.team } : {}) };
}

/** Keys of teams that do not exist now: whatever team of that name is created next must not revive them. */
async function teamKeysOf(m: Model): Promise<string[]> {
  const { items } = await m.registry.ownedaccesskeys.list();
  return items.filter((k) => {
    const team = (k.spec as { team?: string }).team;
    return team !== undefined && !m.auth.teams.get(team);
  }).map((k) => k.metadata.name!);
}

/** One line per finding, for failure messages and the report. */
export const describeFindings = (fs: Finding[]) =>
  fs.slice(0, 5).map((f) => `${f.writer} ${JSON.stringify(f.write)} -> ${f.status}; ${f.key} gained "${f.probe}" (${f.when})`).join('\n');
