/**
 * AccessRequests in the escalation model (issue 36): worlds whose Teams declare approvers,
 * required approvals and break-glass users, and whose approvers often lack some of what the team
 * confers; requests (break-glass or not, for oneself or another), approvals (of a request the writer
 * may approve, of its own, of one it approved already) and the model's clock moving past
 * expiresAt. Besides the property every write is judged by (run.ts: no key gains what the writer
 * did not hold), the oracles here: no approval counts twice or by its requester, break-glass only
 * for whom the Team names, and nothing outlives expiresAt.
 */
import fc from 'fast-check';
import { isApprover, requiredApprovals } from '../../../src/api/access-request.js';
import type { AccessRequest } from '../../../src/api/types.js';
import type { Identity } from '../../../src/auth/identity.js';
import type { Registry } from '../../../src/registry/registry.js';
import { permissions, type Model, type Violation } from './harness.js';
import { keySpec, roles, scope, teamNames, teamSpec, users, write, type RequestWrite, type Scenario, type Spec } from './world.js';

/** A Team's spec.accessRequests: approvers besides its owner, how many must approve, who may break the glass. */
const requestPolicy: fc.Arbitrary<Spec> = fc
  .record({
    approvers: fc.subarray(users, { minLength: 1, maxLength: 2 }),
    requiredApprovals: fc.constantFrom(1, 1, 2),
    breakGlass: fc.oneof(fc.constant(undefined), fc.subarray(users, { minLength: 1, maxLength: 2 }).map((u) => ({ users: u }))),
  })
  .map((p) => Object.fromEntries(Object.entries(p).filter(([, v]) => v !== undefined)));

/** Mostly teams with cluster roles, so a membership confers what its approvers may lack. */
const grantingRoles = fc.oneof(fc.constant([] as string[]), { weight: 3, arbitrary: fc.subarray(roles.slice(1), { minLength: 1, maxLength: 2 }) });

const requestTeamSpec: fc.Arbitrary<Spec> = fc.tuple(teamSpec, grantingRoles, requestPolicy).map(([spec, rs, accessRequests]) => ({
  ...spec,
  ...(rs.length > 0 ? { clusterRoles: rs.map((name) => ({ name })) } : {}),
  accessRequests,
}));

/** One unscoped (mostly) key per user, so every declared approver and requester can write; a few others. */
const requestWorld = fc.record({
  teams: fc.uniqueArray(fc.record({ name: fc.constantFrom(...teamNames), spec: requestTeamSpec }), { selector: (t) => t.name, minLength: 2, maxLength: 4 }),
  keys: fc
    .tuple(fc.array(fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, scope), { minLength: users.length, maxLength: users.length }), fc.array(keySpec, { maxLength: 2 }))
    .map(([scopes, extra]) => [...users.map((user, i) => ({ user, ...(scopes[i] ? { scope: scopes[i] } : {}) })), ...extra].map((spec, i) => ({ name: `k${i}`, spec }))),
});

const requestDraws = {
  request: fc.record({
    op: fc.constant('requestAccess' as const),
    team: fc.constantFrom(...teamNames),
    forUser: fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, fc.constantFrom(...users)),
    duration: fc.constantFrom('20s' as const, '30s' as const, '1h' as const),
    breakGlass: fc.oneof({ weight: 2, arbitrary: fc.constant(false) }, fc.constant(true)),
  }),
  approve: fc.record({ op: fc.constant('approveRequest' as const), pick: fc.nat(9), which: fc.oneof({ weight: 4, arbitrary: fc.constant('mine' as const) }, fc.constant('own' as const), fc.constant('again' as const)) }),
  // Past a 20s request, past a 30s one, past every request (at most 1h).
  tick: fc.record({ op: fc.constant('tick' as const), ms: fc.constantFrom(25_000, 35_000, 3_700_000) }),
  policy: fc.record({ op: fc.constant('patchTeam' as const), pick: fc.nat(9), patch: requestPolicy.map((p) => ({ spec: { accessRequests: p } })) }),
  // A key made for a user (by whoever writes it): it carries the user's Active requests and break-glass
  // teams to whoever holds its value (found by a review at stop 64, when nothing here drew it).
  keyForUser: fc.record({ op: fc.constant('createKey' as const), spec: fc.constantFrom(...users).map((user): Spec => ({ user })), forSelf: fc.constant(false), forRequester: fc.boolean() }),
};

/** One write by the key at `by`. */
const by = <W>(w: fc.Arbitrary<W>) => fc.record({ by: fc.nat(9), write: w });

const approveAs = (which: 'mine' | 'again') => fc.record({ op: fc.constant('approveRequest' as const), pick: fc.nat(9), which: fc.constant(which) });
/** Often the clock moves on right after a grant. */
const maybeTick = fc.oneof(fc.constant([]), by(requestDraws.tick).map((t) => [t]));
/** After a request's first approval: the clock, the same approver again, or another approval (where two are required). */
const followUp = fc.oneof(
  maybeTick,
  by(approveAs('again')).map((a) => [a]),
  fc.tuple(by(approveAs('mine')), maybeTick).map(([a, t]) => [a, ...t]),
);

/**
 * Scenarios about temporary access: mostly a request followed by an approval (so approvals find
 * something pending) and often by the clock moving on, lone approvals (of one's own, again), break-glass requests, the clock moving
 * on, changes of a Team's approvers and break-glass users, and the other writes.
 */
export const requestScenario: fc.Arbitrary<Scenario> = fc.record({
  world: requestWorld,
  writes: fc
    .array(
      fc.oneof(
        { weight: 4, arbitrary: fc.tuple(by(requestDraws.request), by(approveAs('mine')), followUp).map(([r, a, f]) => [r, a, ...f]) },
        { weight: 2, arbitrary: fc.tuple(by(requestDraws.approve)) },
        { weight: 2, arbitrary: fc.tuple(by(requestDraws.request), maybeTick).map(([r, t]) => [r, ...t]) },
        { weight: 1, arbitrary: fc.tuple(by(requestDraws.tick)) },
        { weight: 2, arbitrary: fc.tuple(by(requestDraws.request), by(approveAs('mine')), by(requestDraws.keyForUser)) },
        { weight: 1, arbitrary: fc.tuple(by(requestDraws.keyForUser)) },
        { weight: 1, arbitrary: fc.tuple(by(requestDraws.policy)) },
        { weight: 1, arbitrary: fc.tuple(by(write)) },
      ),
      { minLength: 3, maxLength: 7 },
    )
    .map((segments) => segments.flat()),
});

const identityOf = (m: Model, key: string): Promise<Identity | undefined> =>
  m.auth.authenticator.reauthenticate(`Bearer ${m.values.get(key) ?? ''}`).then((r) => r.identity, () => undefined);

/** The requests waiting for approval. */
export const pendingRequests = async (m: Model) => (await m.registry.accessrequests.list()).items.filter((r) => (r.status as { phase?: string } | undefined)?.phase === 'Pending') as AccessRequest[];

/** The pending requests `who` would approve for `which` (absent: those whose team it approves, as before `which`). */
function approvable(pending: AccessRequest[], m: Model, who: Identity | undefined, which: 'mine' | 'own' | 'again' | undefined): AccessRequest[] {
  if (!who) return [];
  if (which === 'own') return pending.filter((r) => r.spec.user === who.user);
  if (which === 'again') return pending.filter((r) => (r.status?.approvals ?? []).some((a) => a.user === who.name));
  return pending.filter((r) => isApprover(m.auth.teams.get(r.spec.team), who.user, who.teams) && (which === undefined || r.spec.user !== who.user));
}

/** The users a team's break-glass users name. */
const breakGlassUsers = (m: Model, team: string): readonly string[] => m.auth.teams.get(team)?.spec?.accessRequests?.breakGlass?.users ?? [];

/** The teams whose break-glass users name `user`. */
const breakGlassTeams = (m: Model, user: string | undefined) => teamNames.filter((t) => user !== undefined && breakGlassUsers(m, t).includes(user));

/** The users of Active requests, whose keys carry temporary access now; without any, the break-glass users, who may take it. */
export async function usersOnCall(m: Model): Promise<string[]> {
  const active = (await m.registry.accessrequests.list()).items.filter((r) => (r.status as { phase?: string } | undefined)?.phase === 'Active') as AccessRequest[];
  const now = [...new Set(active.map((r) => r.spec.user).filter((u): u is string => u !== undefined))].sort();
  return now.length > 0 ? now : [...new Set(teamNames.flatMap((t) => breakGlassUsers(m, t)))].sort();
}

/** Among `keys`, the writers that make `w` worth trying (an approver of a pending request, a break-glass user, a keys admin short of management-admin), if any. */
export async function preferredWriters(m: Model, w: RequestWrite | { op: string }, keys: string[]): Promise<string[]> {
  if (w.op === 'createKey' && (w as { forRequester?: boolean }).forRequester) {
    // Keys admins lacking a role an Active request gives (or a break-glass team would): those a key for its user would widen.
    const active = (await m.registry.accessrequests.list()).items.filter((r) => (r.status as { phase?: string } | undefined)?.phase === 'Active') as AccessRequest[];
    const teams = active.length > 0 ? active.map((r) => r.spec.team) : teamNames.filter((t) => breakGlassUsers(m, t).length > 0);
    const given = new Set(teams.flatMap((t) => (m.auth.teams.get(t)?.spec?.clusterRoles ?? []).map((r) => r.name)));
    const out: string[] = [];
    for (const k of keys) {
      const roles = (await identityOf(m, k))?.clusterRoles;
      if (roles?.has('accesskeys-admin') && !roles.has('management-admin') && [...given].some((r) => !roles.has(r))) out.push(k);
    }
    return out;
  }
  const breakGlass = w.op === 'requestAccess' && (w as { breakGlass?: boolean }).breakGlass === true;
  const which = w.op === 'approveRequest' ? (w as { which?: 'mine' | 'own' | 'again' }).which : undefined;
  if (!breakGlass && !which) return [];
  const pending = which ? await pendingRequests(m) : [];
  const out: string[] = [];
  for (const k of keys) {
    const who = await identityOf(m, k);
    if (breakGlass ? breakGlassTeams(m, who?.user).length > 0 : approvable(pending, m, who, which).length > 0) out.push(k);
  }
  return out;
}

/** Sends a request or an approval with the writer's key; returns its status, the request and who the writer is. */
export async function sendRequestWrite(m: Model, writer: string, w: Exclude<RequestWrite, { op: 'tick' }>, n: number): Promise<{ status: number; request?: string; by?: Identity }> {
  const as = m.values.get(writer)!;
  if (w.op === 'requestAccess') {
    // Break-glass for a team that names the writer, if one does.
    const mayBreak = w.breakGlass ? breakGlassTeams(m, (await identityOf(m, writer))?.user) : [];
    const team = mayBreak.length > 0 ? mayBreak[teamNames.indexOf(w.team) % mayBreak.length]! : w.team;
    const spec = { team, duration: w.duration, reason: 'model', ...(w.forUser ? { user: w.forUser } : {}), ...(w.breakGlass ? { breakGlass: true } : {}) };
    const request = `r${n}`;
    return { status: (await m.request('POST', '/accessrequests', { apiVersion: 'management.service/v1', kind: 'AccessRequest', metadata: { name: request }, spec }, as)).status, request };
  }
  const pending = await pendingRequests(m);
  if (pending.length === 0) return { status: 404 };
  const by = await identityOf(m, writer);
  const mine = approvable(pending, m, by, w.which);
  const from = mine.length > 0 ? mine : pending;
  const req = from[w.pick % from.length]!;
  const body = { ...req, status: { conditions: [{ type: 'Approved', status: 'True' }] } };
  return { status: (await m.request('PUT', `/accessrequests/${req.metadata.name}/approval`, body, as)).status, request: req.metadata.name!, ...(by ? { by } : {}) };
}

/** Who the model saw approve each request (accepted approvals only), by identity name. */
export type Approvals = Map<string, Set<string>>;

/**
 * After an accepted request write: an approval by the requester, or one that made a request Active
 * with fewer distinct approvers than its team requires, gave what no approver granted; a
 * break-glass request is only for a user its Team names, asking for themselves. Returns the
 * findings, and whether the write was a break-glass activation (its gains are the Team's writer's:
 * naming a break-glass user is judged as adding a member, not this write).
 */
export async function requestFindings(m: Model, writer: string, w: RequestWrite, sent: { request?: string; by?: Identity }, approvals: Approvals): Promise<{ found: Violation[]; breakGlass: boolean }> {
  const req = sent.request ? ((await m.registry.accessrequests.get(sent.request).catch(() => undefined)) as AccessRequest | undefined) : undefined;
  if (!req) return { found: [], breakGlass: false };
  const finding = (probe: string): Violation => ({ key: writer, probe, when: 'now' });
  if (w.op === 'requestAccess') {
    if (!req.spec.breakGlass) return { found: [], breakGlass: false };
    const who = await identityOf(m, writer);
    const named = breakGlassUsers(m, req.spec.team);
    const ok = who?.user !== undefined && req.spec.user === who.user && named.includes(who.user);
    return { found: ok ? [] : [finding(`break-glass request ${sent.request} for ${req.spec.user} on team ${req.spec.team} accepted from ${who?.name ?? writer} (break-glass users: ${named.join(', ') || 'none'})`)], breakGlass: true };
  }
  const by = sent.by;
  if (!by) return { found: [], breakGlass: false };
  const found: Violation[] = [];
  if (req.spec.user !== undefined && req.spec.user === by.user) found.push(finding(`${by.name} approved their own request ${sent.request}`));
  const seen = approvals.get(sent.request!) ?? new Set<string>();
  seen.add(by.name);
  approvals.set(sent.request!, seen);
  const distinct = [...seen].filter((u) => u !== req.spec.user);
  const needed = requiredApprovals(m.auth.teams.get(req.spec.team));
  if (req.status?.phase === 'Active' && distinct.length < needed) found.push(finding(`${sent.request} is Active after approvals by ${distinct.join(', ') || 'nobody'}; team ${req.spec.team} requires ${needed}`));
  return { found, breakGlass: false };
}

/** Whether a request grants anything at `at` by the model's own reading: Active, and `at` before its expiresAt. */
const liveAt = (at: Date) => (r: { status?: unknown }) => {
  const s = r.status as AccessRequest['status'];
  return s?.phase === 'Active' && s.expiresAt !== undefined && at.getTime() < Date.parse(s.expiresAt);
};

/**
 * Nothing outlives expiresAt: at `at` every key holds nothing beyond what it holds when the
 * authenticator sees only the requests still live at `at` (the stored records, read by the model).
 * The expiry sweep is not run: authorization must not wait for it.
 */
export async function outlivingExpiry(m: Model, at: Date): Promise<Violation[]> {
  const requests = m.registry.accessrequests;
  const view = Object.create(m.registry) as Registry;
  Object.defineProperty(view, 'accessrequests', {
    value: {
      list: async (opts?: Parameters<typeof requests.list>[0]) => {
        const l = await requests.list(opts);
        return { ...l, items: l.items.filter(liveAt(at)) };
      },
      // How the authenticator reads a user's requests (the watch cache's index).
      byField: async (...args: Parameters<typeof requests.byField>) => (await requests.byField(...args)).filter(liveAt(at)),
    },
  });
  const [held, due] = [await permissions(m, at, []), await permissions({ ...m, registry: view }, at, [])];
  const found: Violation[] = [];
  for (const [key, probes] of held) for (const p of probes) if (!due.get(key)?.has(p)) found.push({ key, probe: `${p}, past the expiresAt of every request that granted it`, when: 'now' });
  return found;
}
