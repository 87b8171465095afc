/**
 * The access change's lines as a reviewer reads them, computed without a server over small
 * worlds: keys the plan creates, disables or rescopes, a Login key's person, a deleted Team, a plan
 * of many Teams (the planned world indexed anew), rights already held through a covering object,
 * the order of the lines, and what pull-request mode withholds.
 */
import { describe, expect, it } from 'vitest';
import type { KubeObject, OwnedAccessKey, Team } from '../../src/api/types.js';
import { accessChange, namedIn, type AccessChange } from '../../src/gitops/plan/access-change.js';
import type { PlanStep } from '../../src/gitops/plan/plan.js';
import { accessChangeText } from '../../src/gitops/report/access-change.js';

const v1 = 'management.service/v1';
const team = (name: string, spec: Team['spec']): Team => ({ apiVersion: v1, kind: 'Team', metadata: { name, uid: `uid-${name}`, resourceVersion: '1' }, spec }) as Team;
/** A live key; a team key is bound to its team as the server binds it. */
const key = (name: string, spec: Record<string, unknown>): OwnedAccessKey =>
  ({ apiVersion: v1, kind: 'OwnedAccessKey', metadata: { name, uid: `uid-${name}`, ...(spec.team ? { ownerReferences: [{ apiVersion: v1, kind: 'Team', name: spec.team, uid: `uid-${spec.team}` }] } : {}) }, spec }) as unknown as OwnedAccessKey;
const write = (o: KubeObject, type: 'create' | 'replace' | 'delete'): PlanStep =>
  ({ kind: o.kind, plural: o.kind === 'Team' ? 'teams' : 'ownedaccesskeys', name: o.metadata.name!, type, changes: [], drift: false, ...(type === 'delete' ? {} : { body: o }) }) as PlanStep;
const change = (teams: Team[], keys: OwnedAccessKey[], actions: PlanStep[], mayName?: (n: string) => boolean): AccessChange =>
  accessChange({ teams, keys, plan: { sourceId: 's', actions }, group: 'management.service', now: new Date('2026-06-01T00:00:00Z'), ...(mayName ? { mayName } : {}) });
const lines = (c: AccessChange) => accessChangeText(c).filter((l) => l.startsWith('  + ') || l.startsWith('  - ')).map((l) => l.slice(2));
const entries = (list: AccessChange['gains']) => list.map((e) => `${e.identity} ${e.verb} ${e.object}`);

const selfEdit = { name: 'self-edit', verbs: ['get', 'update'], teams: ['pay'] };
const pay = team('pay', { users: ['ana'], access: [selfEdit] });

describe('the access change of keys', () => {
  it('a team key the plan creates gains what its team may do (the server binds it on create)', () => {
    const c = change([pay], [], [write({ apiVersion: v1, kind: 'OwnedAccessKey', metadata: { name: 'pay-ci' }, spec: { team: 'pay' } } as KubeObject, 'create')]);
    expect(lines(c)).toEqual([
      '+ team key pay-ci gains get, list, watch, create, update, patch, delete on the keys of team pay (via team pay, access rule self-edit of team pay, may update team pay)',
      '+ team key pay-ci gains get, update on teams/pay (via team pay, access rule self-edit of team pay)',
      // A key that authenticates may list (lists show only what it may get).
      '+ team key pay-ci gains list, watch on ownedaccesskeys/* (via the open list)',
      '+ team key pay-ci gains list, watch on teams/* (via the open list)',
    ]);
    expect(c).toMatchObject({ identitiesChecked: 1, identitiesChanged: 1, losses: [] });
    expect(c.gains[0]).toMatchObject({ identity: 'key:pay-ci', identityKind: 'key', who: 'team key pay-ci', resource: 'ownedaccesskeys', name: 'team=pay', object: 'ownedaccesskeys[team=pay]', role: '' });
    expect(c.gains.find((e) => e.object === 'teams/pay')).toMatchObject({ resource: 'teams', name: 'pay', verb: 'update' });
    // A pull request that may not name team pay sees none of its key's lines, not even the open list's.
    const hidden = change([pay], [], [write({ apiVersion: v1, kind: 'OwnedAccessKey', metadata: { name: 'pay-ci' }, spec: { team: 'pay' } } as KubeObject, 'create')], (n) => n !== 'pay');
    expect(hidden).toMatchObject({ gains: [], withheld: c.gains.length });
  });

  it("a live team key moves with its team's rules", () => {
    const c = change([pay], [key('pay-ci', { team: 'pay' })], [write(team('pay', { users: ['ana'], access: [{ ...selfEdit, verbs: ['get', 'update', 'delete'] }] }), 'replace')]);
    expect(lines(c)).toEqual(['+ team key pay-ci gains delete on teams/pay (via team pay, access rule self-edit of team pay)', '+ ana gains delete on teams/pay (via access rule self-edit of team pay)']);
  });

  it("a team key replaced without its team's binding (not a create) authenticates as nobody: it gains nothing", () => {
    const c = change([pay], [], [write({ apiVersion: v1, kind: 'OwnedAccessKey', metadata: { name: 'pay-ci' }, spec: { team: 'pay' } } as KubeObject, 'replace')]);
    expect(c).toEqual({ identitiesChecked: 1, identitiesChanged: 0, gains: [], losses: [] });
  });

  it('a team key the plan creates disabled, or for a team that does not exist, gains nothing', () => {
    const created = (spec: Record<string, unknown>) => write({ apiVersion: v1, kind: 'OwnedAccessKey', metadata: { name: 'pay-ci' }, spec } as KubeObject, 'create');
    expect(change([pay], [], [created({ team: 'pay', disabled: true })])).toMatchObject({ identitiesChanged: 0, gains: [] });
    expect(change([pay], [], [created({ team: 'nope' })])).toMatchObject({ identitiesChanged: 0, gains: [] });
  });

  it('a team key disabled loses everything; its label changed moves nothing', () => {
    const live = key('pay-ci', { team: 'pay' });
    const disabled = { ...live, spec: { ...live.spec, disabled: true } } as OwnedAccessKey;
    const c = change([pay], [live], [write(disabled, 'replace')]);
    expect(lines(c)).toEqual([
      '- team key pay-ci loses get, list, watch, create, update, patch, delete on the keys of team pay (via team pay, access rule self-edit of team pay, may update team pay)',
      '- team key pay-ci loses get, update on teams/pay (via team pay, access rule self-edit of team pay)',
      '- team key pay-ci loses list, watch on ownedaccesskeys/* (via the open list)',
      '- team key pay-ci loses list, watch on teams/* (via the open list)',
    ]);
    const relabelled = { ...live, metadata: { ...live.metadata, labels: { cost: 'x' } } } as OwnedAccessKey;
    expect(change([pay], [live], [write(relabelled, 'replace')])).toEqual({ identitiesChecked: 0, identitiesChanged: 0, gains: [], losses: [] });
  });

  it("a user's key given a scope is named by its user; a key of no user or team by its name", () => {
    const viewer = team('view', { users: ['ana'], groups: ['bots'], clusterRoles: [{ name: 'teams-viewer' }] });
    const scoped = key('ana-cli', { user: 'ana' });
    const narrowed = { ...scoped, spec: { user: 'ana', scope: { rules: [{ verbs: ['get'], resources: [{ group: 'management.service', resources: ['teams'] }] }] } } } as OwnedAccessKey;
    const robot = key('robot', { subject: 'robot', groups: ['bots'] });
    const c = change([viewer], [scoped, robot], [write(narrowed, 'replace'), write({ ...robot, spec: { ...robot.spec, disabled: true } } as OwnedAccessKey, 'replace')]);
    expect(lines(c)).toEqual([
      // The scope allows `get` on Teams only: ana's key keeps that, and loses the rest.
      '- key ana-cli of ana loses get, list, watch, create, update, patch, delete on the keys of user ana (via own keys)',
      '- key ana-cli of ana loses list, watch on ownedaccesskeys/* (via the open list)',
      '- key ana-cli of ana loses list, watch on teams/* (via team view, role teams-viewer)',
      '- key ana-cli of ana loses list, watch on teams/* (via the open list)',
      // Disabled: everything.
      '- key robot loses cluster role teams-viewer (via team view (group bots))',
      '- key robot loses list, watch on ownedaccesskeys/* (via the open list)',
      '- key robot loses get, list, watch on teams/* (via team view (group bots), role teams-viewer)',
      '- key robot loses list, watch on teams/* (via the open list)',
    ]);
    // A pull request that may not name ana sees none of her key's lines.
    const hidden = change([viewer], [scoped, robot], [write(narrowed, 'replace')], (n) => n !== 'ana');
    expect(hidden).toMatchObject({ gains: [], losses: [], withheld: c.losses.filter((e) => e.identity === 'key:ana-cli').length });
  });

  it("a Login key's person with several groups is one line per person and groups, the groups sorted once", () => {
    const login = key('login-sam', { type: 'Login', user: 'sam', identity: { groups: ['sre', 'eng', 'sre'] } });
    const c = change([team('ops', {})], [login], [write(team('ops', { groups: ['sre'], clusterRoles: [{ name: 'teams-viewer' }] }), 'replace')]);
    const sam = c.gains.filter((e) => e.identityKind === 'signIn');
    expect(new Set(sam.map((e) => e.identity))).toEqual(new Set(['signIn:sam[eng,sre]']));
    expect(lines(c)).toContain('+ sam (signed in with groups eng, sre) gains cluster role teams-viewer (via team ops (group sre))');
    // A pull request that may not name sam sees the group's lines, not sam's.
    const hidden = change([team('ops', {})], [login], [write(team('ops', { groups: ['sre'], clusterRoles: [{ name: 'teams-viewer' }] }), 'replace')], (n) => n !== 'sam');
    expect(new Set(hidden.gains.map((e) => e.identity))).toEqual(new Set(['group:sre']));
    expect(lines(hidden)).toContain('+ anyone in group sre gains cluster role teams-viewer (via team ops (group sre))');
    expect(hidden.gains[0]).toMatchObject({ identity: 'group:sre', identityKind: 'group', who: 'anyone in group sre' });
    expect(hidden.withheld).toBe(sam.length);
  });
});

describe('a Login key whose provider gave no groups', () => {
  // Judged as itself because its person narrowed it with a scope (a plain one is just its user).
  it('is its person, signed in with no group named', () => {
    const login = key('login-lee', { type: 'Login', user: 'lee', scope: { rules: [{ verbs: ['get'], resources: [{ group: 'management.service', resources: ['teams'] }] }] } });
    const c = change([team('ops', {})], [login], [write(team('ops', { users: ['lee'], clusterRoles: [{ name: 'teams-viewer' }] }), 'replace')]);
    expect(new Set(c.gains.filter((e) => e.identityKind === 'signIn').map((e) => e.identity))).toEqual(new Set(['signIn:lee']));
    expect(lines(c)).toContain('+ lee (signed in) gains cluster role teams-viewer (via team ops)');
  });
});

describe('a key the plan deletes', () => {
  it('a team key the plan deletes loses what it held', () => {
    const live = key('pay-ci', { team: 'pay' });
    const c = change([pay], [live], [write(live, 'delete')]);
    expect(c).toMatchObject({ identitiesChecked: 1, identitiesChanged: 1, gains: [] });
    expect(lines(c)).toContain('- team key pay-ci loses get, update on teams/pay (via team pay, access rule self-edit of team pay)');
  });
});

describe('the access change of Teams', () => {
  it("a deleted Team's members lose what its rules gave them, and a role held is a right of its own", () => {
    const admins = team('admins', { users: ['root'], clusterRoles: [{ name: 'accesskeys-admin' }] });
    const c = change([pay, admins], [], [write(pay, 'delete'), write(team('admins', { users: ['root'] }), 'replace')]);
    expect(lines(c)).toEqual([
      '- ana loses get, list, watch, update, patch, delete on the keys of team pay (via access rule self-edit of team pay, may update team pay)',
      '- ana loses get, update on teams/pay (via access rule self-edit of team pay)',
      '- root loses cluster role accesskeys-admin (via team admins)',
      '- root loses get, list, watch, create, update, patch, delete, deletecollection on ownedaccesskeys/* (via team admins, role accesskeys-admin)',
    ]);
    // report.json's order: most powerful first, then identity, object, verb.
    const keyWrites = (who: string, object: string, verbs: string[]) => verbs.map((v) => `user:${who} ${v} ${object}`);
    expect(entries(c.losses)).toEqual([
      ...keyWrites('ana', 'ownedaccesskeys[team=pay]', ['update', 'patch', 'delete']),
      'user:root hold clusterroles/accesskeys-admin',
      ...keyWrites('root', 'ownedaccesskeys/*', ['create', 'update', 'patch', 'delete', 'deletecollection']),
      'user:ana update teams/pay',
      ...keyWrites('ana', 'ownedaccesskeys[team=pay]', ['get', 'list', 'watch']),
      'user:ana get teams/pay',
      ...keyWrites('root', 'ownedaccesskeys/*', ['get', 'list', 'watch']),
    ]);
    expect(c.losses.find((e) => e.verb === 'hold')).toMatchObject({ resource: 'clusterroles', name: 'accesskeys-admin', object: 'clusterroles/accesskeys-admin', role: 'accesskeys-admin' });
    expect(c.losses.find((e) => e.verb === 'create')).toMatchObject({ role: 'accesskeys-admin', name: '*', resource: 'ownedaccesskeys' });
  });

  it('a Team without a spec grants nothing: labelling it moves no right, giving it members does', () => {
    const bare = { apiVersion: v1, kind: 'Team', metadata: { name: 'bare', uid: 'uid-bare' } } as Team;
    expect(change([bare], [], [write({ ...bare, metadata: { ...bare.metadata, labels: { a: 'b' } } } as Team, 'replace')])).toEqual({ identitiesChecked: 0, identitiesChanged: 0, gains: [], losses: [] });
    expect(lines(change([bare], [], [write(team('bare', { users: ['ana'], clusterRoles: [{ name: 'teams-viewer' }] }), 'replace')]))).toContain('+ ana gains cluster role teams-viewer (via team bare)');
  });

  it('a cluster role is held through the teams that grant it, not every team of its holder', () => {
    const c = change([pay, team('view', { clusterRoles: [{ name: 'teams-viewer' }] })], [], [write(team('view', { users: ['ana'], clusterRoles: [{ name: 'teams-viewer' }] }), 'replace')]);
    expect(lines(c)[0]).toBe('+ ana gains cluster role teams-viewer (via team view)');
    expect(c.gains[0]!.via).toEqual(['team view']);
  });

  it('a right already held on every Team or every key is no line of its own', () => {
    const admins = team('admins', { users: ['ana'], clusterRoles: [{ name: 'teams-admin' }] });
    const c = change([pay, admins], [], [write(team('pay', { users: ['ana'], access: [{ ...selfEdit, verbs: ['get', 'update', 'delete'] }] }), 'replace')]);
    expect(c).toEqual({ identitiesChecked: 1, identitiesChanged: 0, gains: [], losses: [] });
    // Without the role, the same change is ana's gain.
    expect(lines(change([pay], [], [write(team('pay', { users: ['ana'], access: [{ ...selfEdit, verbs: ['get', 'update', 'delete'] }] }), 'replace')]))).toEqual(['+ ana gains delete on teams/pay (via access rule self-edit of team pay)']);
  });

  it("a team's keys are covered by the keys of every team, and by every key; a user's keys by every key", () => {
    const readOnly = team('pay', { users: ['ana'], access: [{ name: 'r', verbs: ['get'], users: ['ana'] }] });
    const writable = team('pay', { users: ['ana'], access: [{ name: 'r', verbs: ['get', 'update'], users: ['ana'] }] });
    // Without a role, update on the team brings its keys.
    expect(lines(change([readOnly], [], [write(writable, 'replace')]))).toEqual([
      '+ ana gains get, list, watch, update, patch, delete on the keys of team pay (via access rule r of team pay, may update team pay)',
      '+ ana gains update on teams/pay (via access rule r of team pay)',
    ]);
    // teams-admin already gives update on every Team and the keys of every team: nothing moves.
    const teamsAdmin = team('admins', { users: ['ana'], clusterRoles: [{ name: 'teams-admin' }] });
    expect(change([readOnly, teamsAdmin], [], [write(writable, 'replace')])).toMatchObject({ identitiesChanged: 0, gains: [] });
    // accesskeys-admin gives every key: only the Team's own verb is new.
    const keysAdmin = team('admins', { users: ['ana'], clusterRoles: [{ name: 'accesskeys-admin' }] });
    expect(lines(change([readOnly, keysAdmin], [], [write(writable, 'replace')]))).toEqual(['+ ana gains update on teams/pay (via access rule r of team pay)']);
    // A key of ana's narrowed to reading Teams loses every key, which covers ana's own.
    const cli = key('ana-cli', { user: 'ana', scope: { roles: [{ role: 'cli' }] } });
    const narrowed = { ...cli, spec: { user: 'ana', scope: { rules: [{ verbs: ['get'], resources: [{ group: 'management.service', resources: ['teams'] }] }] } } } as OwnedAccessKey;
    const cut = lines(change([keysAdmin], [cli], [write(narrowed, 'replace')]));
    expect(cut.some((l) => l.includes('on ownedaccesskeys/*'))).toBe(true);
    expect(cut.filter((l) => l.includes('the keys of user ana'))).toEqual([]);
    // Granting teams-admin shows the keys of every team as a line of its own.
    expect(lines(change([readOnly, team('admins', { users: ['ana'] })], [], [write(teamsAdmin, 'replace')]))).toContain(
      '+ ana gains get, list, watch, update, patch, delete on the keys of every team (via team admins, role teams-admin, may update every team)',
    );
  });

  it('two rules that read alike are one way', () => {
    const twice = team('pay', { users: ['ana'], access: [{ name: 'readers', verbs: ['get'], users: ['ana'] }, { name: 'readers', verbs: ['get'], teams: ['pay'] }] });
    expect(lines(change([team('pay', { users: ['ana'] })], [], [write(twice, 'replace')]))).toEqual(['+ ana gains get on teams/pay (via access rule readers of team pay)']);
  });

  it('lines come most powerful first, then by identity, object and verb', () => {
    const c = change([team('pay', { users: ['bea', 'ana'] }), team('x', {})], [], [write(team('pay', { users: ['bea', 'ana'], access: [{ verbs: ['update', 'get'], users: ['bea', 'ana'] }], clusterRoles: [{ name: 'management-admin' }] }), 'replace')]);
    const writes = ['create', 'update', 'patch', 'delete', 'deletecollection'];
    const reads = ['get', 'list', 'watch'];
    const of = (who: string, verbs: string[], object: string) => verbs.map((v) => `user:${who} ${v} ${object}`);
    expect(entries(c.gains)).toEqual([
      'user:ana hold clusterroles/management-admin',
      'user:bea hold clusterroles/management-admin',
      ...of('ana', writes, 'ownedaccesskeys/*'),
      ...of('bea', writes, 'ownedaccesskeys/*'),
      ...of('ana', writes, 'teams/*'),
      ...of('bea', writes, 'teams/*'),
      ...of('ana', reads, 'ownedaccesskeys/*'),
      ...of('ana', reads, 'teams/*'),
      ...of('bea', reads, 'ownedaccesskeys/*'),
      ...of('bea', reads, 'teams/*'),
    ]);
  });

  it('a plan of many Teams (the planned world indexed anew) says what one Team at a time says', () => {
    const many = Array.from({ length: 34 }, (_, i) => team(`t${String(i).padStart(2, '0')}`, { access: [{ verbs: ['get'], teams: [`t${String(i).padStart(2, '0')}`] }] }));
    const grown = many.map((t, i) => team(t.metadata.name!, { ...t.spec, users: [`u${i}`] }));
    // t00 now lets team ops (unchanged, so taken from the live world) read it.
    grown[0] = team('t00', { users: ['u0'], access: [{ verbs: ['get'], teams: ['t00', 'ops'] }] });
    const ops = team('ops', { users: ['oscar'] });
    const gone = team('gone', { users: ['gina'], access: [{ verbs: ['get'], users: ['gina'] }] });
    const big = change([...many, gone, ops], [], [...grown.map((t) => write(t, 'replace')), write(gone, 'delete')]);
    expect(big.identitiesChanged).toBe(36);
    expect(lines(big)).toHaveLength(36);
    expect(lines(big)).toContain('+ oscar gains get on teams/t00 (via access rule 0 of team t00)');
    expect(lines(big)).toContain('+ u7 gains get on teams/t07 (via access rule 0 of team t07)');
    expect(lines(big)).toContain('+ u33 gains get on teams/t33 (via access rule 0 of team t33)');
    expect(lines(big)).toContain('- gina loses get on teams/gone (via access rule 0 of team gone)');
    const small = change([...many, gone, ops], [], [write(grown[0]!, 'replace'), write(grown[7]!, 'replace'), write(gone, 'delete')]);
    expect(lines(small)).toEqual([
      '- gina loses get on teams/gone (via access rule 0 of team gone)',
      '+ oscar gains get on teams/t00 (via access rule 0 of team t00)',
      '+ u0 gains get on teams/t00 (via access rule 0 of team t00)',
      '+ u7 gains get on teams/t07 (via access rule 0 of team t07)',
    ]);
  });
});

describe('pull-request mode: what the source does not name is withheld, and counted', () => {
  const live = team('pay', { users: ['ana'], access: [selfEdit] });

  it('a change naming only what the source names is shown, none withheld; outside pull-request mode nothing is counted', () => {
    const planned = team('pay', { users: ['ana', 'bo'], access: [selfEdit] });
    const c = change([live], [], [write(planned, 'replace')], namedIn([{ obj: planned }]));
    expect(lines(c)).toEqual([
      '+ bo gains get, list, watch, update, patch, delete on the keys of team pay (via access rule self-edit of team pay, may update team pay)',
      '+ bo gains get, update on teams/pay (via access rule self-edit of team pay)',
    ]);
    expect(c.withheld).toBe(0);
    expect(change([live], [], [write(planned, 'replace')])).not.toHaveProperty('withheld');
  });

  it('a change whose identity or object the source does not name is withheld and counted', () => {
    // The source names pay and ana, not eve (a member only the live world has) nor admins (a Team pay now owns).
    const liveEve = team('pay', { users: ['ana'], groups: ['eng'], access: [selfEdit] });
    const admins = team('admins', { users: ['root'], owner: { team: 'pay' } });
    const planned = team('pay', { users: ['ana'], access: [{ ...selfEdit, verbs: ['get', 'update', 'delete'] }] });
    const may = (n: string) => ['pay', 'ana', 'self-edit', 'get', 'update', 'delete'].includes(n);
    const open = change([liveEve, admins], [], [write(planned, 'replace')]);
    const c = change([liveEve, admins], [], [write(planned, 'replace')], may);
    expect(lines(c)).toEqual(['+ ana gains delete on teams/pay (via access rule self-edit of team pay)']);
    const hidden = [...open.gains, ...open.losses].filter((e) => e.identity === 'group:eng' || e.object.includes('admins'));
    expect(hidden.length).toBeGreaterThan(0);
    expect(c.withheld).toBe(hidden.length);
    expect(c.gains.length + c.losses.length + c.withheld!).toBe(open.gains.length + open.losses.length);
    expect(accessChangeText(c).at(-1)).toBe(`  ${c.withheld} more change(s) name users, groups, keys or teams this source does not describe: not shown in a pull request.`);
  });

  it('a user the source does not name is withheld, though the team and rule are named', () => {
    const planned = team('pay', { users: ['ana', 'bo'], access: [selfEdit] });
    const c = change([live], [], [write(planned, 'replace')], (n) => n !== 'bo');
    expect(c).toMatchObject({ gains: [], losses: [] });
    expect(c.withheld).toBe(change([live], [], [write(planned, 'replace')]).gains.length);
  });

  it('of two ways to a right, the one naming an unnamed team is left out; with no way left the right is withheld', () => {
    const secret = team('secret', { users: ['ana'] });
    const planned = team('pay', { users: ['ana'], access: [{ name: 'a', verbs: ['get'], users: ['ana'] }, { name: 'b', verbs: ['get', 'patch'], teams: ['secret'] }] });
    const base = team('pay', { users: ['ana'] });
    expect(lines(change([base, secret], [], [write(planned, 'replace')]))).toEqual([
      '+ ana gains patch on teams/pay (via access rule b of team pay)',
      '+ ana gains get on teams/pay (via access rule a of team pay; or access rule b of team pay)',
    ]);
    const c = change([base, secret], [], [write(planned, 'replace')], (n) => n !== 'secret');
    expect(lines(c)).toEqual(['+ ana gains get on teams/pay (via access rule a of team pay)']);
    expect(c.withheld).toBe(1);
  });
});
