/** Plays one scenario of the escalation model against a fresh server; returns what broke the invariant. */
import { keyValue, later, permissions, seed, settled, startModel, terminatingGrants, violations, type Model, type Violation } from './harness.js';
import { collect, reachViolations, resolveMeta, snapshot, type Stored } from './reach.js';
import { disabledKeys, keySettingWrite, loginKeys, outlivingSignIn, serverAct, signInOf, type Written } from './sign-in.js';
import { teamNames, type Scenario, type Write } from './world.js';
import { outlivingExpiry, pendingRequests, preferredWriters, requestFindings, sendRequestWrite, usersOnCall, type Approvals } from './requests.js';
import type { Identity } from '../../../src/auth/identity.js';
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
async function send(m: Model, writer: string, w: Write, perms: Set<string>, n: number, live: Map<string, Stored>): Promise<{ status: number; key?: string; created?: string; rule?: string; request?: string; by?: Identity }> {
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
      const onCall = w.forRequester ? await usersOnCall(m) : [];
      const requester = onCall.length > 0 ? onCall[n % onCall.length] : undefined;
      const spec = self ? { ...w.spec, user: self, team: undefined } : requester ? { ...w.spec, user: requester, team: undefined } : w.spec;
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
    case 'requestAccess':
    case 'approveRequest':
      return sendRequestWrite(m, writer, w, n);
    case 'createRule':
    case 'patchRule':
    case 'deleteRule':
      return sendRuleWrite(m, writer, w, perms, n);
    case 'setKeyValue':
    case 'reEnable':
      return keySettingWrite(m, writer, w, perms, n);
    case 'signIn':
    case 'endSignIn':
    case 'tick':
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

/** The writes whose judgement looks at `later` (the key they wrote, what a request or rule gives after every ttl). */
const laterJudged = new Set<Write['op']>(['createKey', 'patchKey', 'setKeyValue', 'reEnable', 'patchMeta', 'requestAccess', 'approveRequest', 'createRule', 'patchRule']);

export async function play(s: Scenario): Promise<Finding[]> {
  const m = await startModel();
  try {
    await seed(m, s.world.teams, s.world.keys);
    await seedRules(m, s.world.rules ?? []);
    const findings: Finding[] = [];
    /** The keys written with a sign-in by a key-setting write, and the Login keys they must end with. */
    const tied: Written = new Map();
    /** Who the model saw approve each request. */
    const approvals: Approvals = new Map();
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
      if (write.op === 'tick') {
        // The clock moves past some expiresAt (or every one): what they granted is gone at once.
        m.advance(write.ms);
        findings.push(...(await outlivingExpiry(m, m.now())).map((v) => ({ ...v, writer: 'clock', write, status: 200 })));
        if (findings.length > 0) break;
        continue;
      }
      // An approval with nothing pending is a plain 404: not worth the probes.
      if (write.op === 'approveRequest' && (await pendingRequests(m)).length === 0) continue;
      const now = m.now();
      const then = new Date(now.getTime() + later);
      const names = [`n${i}`];
      // What keys hold `later` is judged only after the writes below that use it (the others: skip the probes).
      const judgedLater = laterJudged.has(write.op);
      const beforeNow = await permissions(m, now, names);
      const beforeLater = judgedLater ? await permissions(m, then, names) : new Map<string, Set<string>>();
      // Writers are keys that still work (the administrator holds everything and proves nothing).
      const keys = [...m.values.keys()].filter((k) => k !== 'admin' && (beforeNow.get(k)?.size ?? 0) > 0);
      if (keys.length === 0) break;
      const live = await snapshot(m);
      const logins = await loginKeys(m);
      const signedIn = bySignIn ? keys.filter((k) => logins.includes(k) || tied.has(k)) : [];
      // An approval by an approver (or a requester, or one who approved already), break-glass by its users: so they are tried.
      const preferred = signedIn.length > 0 ? [] : await preferredWriters(m, write, keys);
      const pool = signedIn.length > 0 ? signedIn : preferred.length > 0 ? preferred : keys;
      const writer = pool[by % pool.length]!;
      // Without a Login key in the world (the plain scenarios) no write is made with a sign-in.
      const tie = logins.length > 0 ? await signInOf(m, writer) : undefined;
      const teamKeysBefore = write.op === 'createTeam' ? await teamKeysOf(m) : [];
      const disabledBefore = tie ? await disabledKeys(m) : [];
      const { status, key, created, rule, ...sent } = await send(m, writer, write, beforeNow.get(writer) ?? new Set(), i, live);
      if (status < 200 || status > 299) continue;
      // A key-setting write with a sign-in ties the key to it; a metadata patch may cut a tie (an accesskeys-admin's right).
      if (key && write.op === 'patchMeta') tied.delete(key);
      if (key && tie && key !== tie && keySetting(write, key, disabledBefore)) tied.set(key, new Set([...(tied.get(key) ?? []), tie]));
      const written = await snapshot(m);
      await collect(m);
      await settled(m);
      const afterNow = await permissions(m, now, names);
      const afterLater = judgedLater ? await permissions(m, then, names) : new Map<string, Set<string>>();
      const reach = reachViolations(live, written, await snapshot(m), beforeNow.get(writer), afterNow.get(writer));
      findings.push(...reach.map((r) => ({ key: writer, probe: r.probe, when: 'now' as const, writer, write, status })));
      // A terminating team grants nothing, to anyone (issue 24).
      findings.push(...(await terminatingGrants(m, now)).map((probe) => ({ key: writer, probe, when: 'now' as const, writer, write, status })));
      const createdKey = write.op === 'createKey' ? await createdKeyOf(m, key!) : undefined;
      const asked = write.op === 'requestAccess' || write.op === 'approveRequest' ? await requestFindings(m, writer, write, sent, approvals) : undefined;
      findings.push(...(asked?.found ?? []).map((f) => ({ ...f, writer, write, status })));
      const found = [
        // A break-glass user's gains were granted by whoever named them on the Team (judged then as adding a member).
        ...(asked?.breakGlass ? [] : violations(writer, beforeNow, afterNow, { when: 'now', ...(created ? { created } : {}), revivedTeamKeys: teamKeysBefore, ...(createdKey ? { createdKey } : {}) })),
        ...(key ? violations(writer, beforeLater, afterLater, { when: 'later', onlyKeys: [key], ...(created ? { created } : {}) }) : []),
      ];
      findings.push(...found.map((f) => ({ ...f, writer, write, status })));
      // Nothing outlives expiresAt: a request or an approval (every request in the model ends within 2h) adds nothing at `then`.
      if (write.op === 'approveRequest' || write.op === 'requestAccess') {
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
