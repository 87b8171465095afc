/**
 * The parts of a plan's access change a reader meets in every line, without a server: how a path
 * is worded (access-via), which names a pull request may show (access-names), which lines come
 * first (access-rank), and which identities a plan is asked about at all (access-identities).
 */
import { describe, expect, it } from 'vitest';
import type { OwnedAccessKey, Team } from '../../src/api/types.js';
import { isOwnIdentity, KeyIndex, touchedIdentities } from '../../src/gitops/plan/access-identities.js';
import { namedIn, objectNames, stepNames } from '../../src/gitops/plan/access-names.js';
import { rank } from '../../src/gitops/plan/access-rank.js';
import { viaText } from '../../src/gitops/plan/access-via.js';
import type { Step } from '../../src/review/model.js';

describe('a path in a few words (viaText)', () => {
  it.each<[string, Step[], string]>([
    ['a member by users', [{ step: 'member', team: 'ops', by: 'users' }], 'team ops'],
    ['a team key is its team', [{ step: 'member', team: 'ops', by: 'self' }], 'team ops'],
    ['a member by a group', [{ step: 'member', team: 'ops', by: 'group:eng' }], 'team ops (group eng)'],
    ['a role through its team, in one phrase', [{ step: 'member', team: 'ops', by: 'users' }, { step: 'role', role: 'teams-admin', team: 'ops' }], 'team ops, role teams-admin'],
    ['a role through another team stays two steps', [{ step: 'member', team: 'ops', by: 'users' }, { step: 'role', role: 'teams-admin', team: 'dev' }, { step: 'listed' }], 'team ops, role teams-admin, the open list'],
    ['the owner user', [{ step: 'owner', of: 'pay', user: 'ana' }], 'owner of team pay'],
    ['the owner team folds its member step', [{ step: 'member', team: 'ops', by: 'users' }, { step: 'owner', of: 'pay', team: 'ops' }], 'owner of team pay (team ops)'],
    ['the owner team by a group keeps the group', [{ step: 'member', team: 'ops', by: 'group:eng' }, { step: 'owner', of: 'pay', team: 'ops' }], 'team ops (group eng), owner of team pay (team ops)'],
    ['the owner team after another team keeps both', [{ step: 'member', team: 'dev', by: 'users' }, { step: 'owner', of: 'pay', team: 'ops' }], 'team dev, owner of team pay (team ops)'],
    ['a rule by name, its member step folded', [{ step: 'member', team: 'ops', by: 'users' }, { step: 'access', of: 'pay', rule: 2, name: 'readers', team: 'ops' }], 'access rule readers of team pay'],
    ['a rule without a name, by index', [{ step: 'access', of: 'pay', rule: 2, user: 'ana' }], 'access rule 2 of team pay'],
    ['own keys', [{ step: 'ownKeys', user: 'ana' }], 'own keys'],
    ['the keys of one team', [{ step: 'teamKeys', team: 'pay' }], 'may update team pay'],
    ['the keys of every team', [{ step: 'teamKeys', team: '*' }], 'may update every team'],
    ["a key's scope", [{ step: 'scope', key: 'ci', scope: 'x' }], "key ci's scope"],
  ])('%s', (_, steps, text) => {
    expect(viaText(steps)).toBe(text);
  });
});

describe('the names a pull request may show', () => {
  it('a path shows its teams, users, keys and groups, never `*`', () => {
    expect(stepNames([{ step: 'member', team: 'ops', by: 'group:eng' }, { step: 'role', role: 'teams-admin', team: 'ops' }])).toEqual(['ops', 'ops', 'eng', 'ops', 'ops']);
    expect(stepNames([{ step: 'member', team: 'ops', by: 'users' }])).toEqual(['ops', 'ops']);
    expect(stepNames([{ step: 'owner', of: 'pay', user: 'ana' }])).toEqual(['pay', 'ana']);
    expect(stepNames([{ step: 'owner', of: 'pay', team: 'ops' }])).toEqual(['pay', 'ops']);
    expect(stepNames([{ step: 'access', of: 'pay', rule: 0, user: 'ana' }])).toEqual(['pay', 'ana']);
    expect(stepNames([{ step: 'ownKeys', user: 'ana' }, { step: 'listed' }])).toEqual(['ana']);
    expect(stepNames([{ step: 'teamKeys', team: 'pay' }, { step: 'teamKeys', team: '*' }])).toEqual(['pay']);
    expect(stepNames([{ step: 'scope', key: 'ci', scope: 'rules' }])).toEqual(['ci']);
  });

  it.each([
    ['teams/pay', ['pay']],
    ['teams/*', []],
    ['ownedaccesskeys[team=pay]', ['pay']],
    ['ownedaccesskeys[user=ana]', ['ana']],
    ['ownedaccesskeys[team=*]', []],
    ['ownedaccesskeys/*', []],
    ['clusterroles/teams-admin', []],
    ['xteams/pay', []],
    ['ownedaccesskeys[team=pay]x', []],
    ['xownedaccesskeys[team=pay]', []],
  ])('object %s shows %j', (object, names) => {
    expect(objectNames(object)).toEqual(names);
  });

  it("a source names its objects' names and every string of their specs, nothing else", () => {
    const may = namedIn([
      { obj: { apiVersion: 'v1', kind: 'Team', metadata: { name: 'pay', labels: { lab: 'label-value' } }, spec: { users: ['ana'], owner: { team: 'ops' }, access: [{ verbs: ['get'], users: ['bo'] }], n: 7, description: null } } as never },
      { obj: { apiVersion: 'v1', kind: 'OwnedAccessKey', metadata: { name: 'ci' }, spec: { team: 'pay' } } as never },
    ]);
    for (const n of ['pay', 'ana', 'ops', 'bo', 'get', 'ci']) expect(may(n), n).toBe(true);
    for (const n of ['label-value', 'lab', 'users', 'owner', '7', 'eve']) expect(may(n), n).toBe(false);
  });
});

describe('most powerful first (rank)', () => {
  it.each([
    [{ resource: 'clusterroles', name: 'management-admin', verb: 'hold' }, 0],
    [{ resource: 'clusterroles', name: 'teams-viewer', verb: 'hold' }, 1],
    ...['create', 'update', 'patch', 'delete', 'deletecollection'].map((verb) => [{ resource: 'ownedaccesskeys', name: '*', verb }, 1] as const),
    [{ resource: 'ownedaccesskeys', name: '*', verb: 'get' }, 3],
    ...['create', 'update', 'patch', 'delete', 'deletecollection'].map((verb) => [{ resource: 'teams', name: 'pay', verb }, 2] as const),
    [{ resource: 'teams', name: 'pay', verb: 'list' }, 3],
  ] as const)('%j -> %i', (entry, r) => {
    expect(rank(entry as Parameters<typeof rank>[0])).toBe(r);
  });
});

const key = (name: string, spec: Record<string, unknown>): OwnedAccessKey => ({ apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', metadata: { name }, spec }) as unknown as OwnedAccessKey;
const sorted = (s: Iterable<string>) => [...s].sort();

describe('who a plan is asked about (touchedIdentities)', () => {
  it('a key is its own identity when it is more than its user: a team, a scope, groups, or no user', () => {
    expect(isOwnIdentity(undefined)).toBe(false);
    expect(isOwnIdentity({ metadata: { name: 'x' } } as OwnedAccessKey)).toBe(false);
    expect(isOwnIdentity(key('k', { user: 'ana' }))).toBe(false);
    expect(isOwnIdentity(key('k', { user: 'ana', groups: [] }))).toBe(false);
    expect(isOwnIdentity(key('k', { team: 'pay' }))).toBe(true);
    expect(isOwnIdentity(key('k', { user: 'ana', groups: ['eng'] }))).toBe(true);
    expect(isOwnIdentity(key('k', { user: 'ana', identity: { groups: ['eng'] } }))).toBe(true);
    expect(isOwnIdentity(key('k', { user: 'ana', scope: { roles: [{ role: 'cli' }] } }))).toBe(true);
    expect(isOwnIdentity(key('k', { subject: 'robot' }))).toBe(true);
  });

  const teams: Record<string, Team['spec']> = {
    pay: { users: ['ana'], groups: ['eng'], owner: { team: 'ops' }, access: [{ verbs: ['get'], users: ['bo'] }, { verbs: ['get'], teams: ['audit'] }] },
    ops: { users: ['olga'], groups: ['sre'] },
    audit: { users: ['aud'] },
    other: { users: ['nobody'] },
  };
  // Built in each test, not when the file is collected: a mutant reached outside a test is "static" and runs the whole mutation set.
  const index = () => new KeyIndex([
    key('pay-ci', { team: 'pay' }),
    key('pay-deploy', { team: 'pay' }),
    key('audit-ci', { team: 'audit' }),
    key('other-ci', { team: 'other' }),
    key('ana-plain', { user: 'ana' }),
    key('ana-scoped', { user: 'ana', scope: { roles: [{ role: 'cli' }] } }),
    key('bo-grouped', { user: 'bo', groups: ['x'] }),
    key('login-sam', { type: 'Login', user: 'sam', identity: { groups: ['sre'] } }),
    key('robot', { subject: 'robot', groups: ['eng'] }),
    key('stranger', { user: 'zed', groups: ['nobody-group'] }),
  ]);


  it("a changed team: its members, the users and teams its owner and rules name, those teams' members, and their own keys", () => {
    const t = touchedIdentities(['pay'], [], (w, n) => (w === 0 ? ({ spec: teams[n] } as Team) : undefined), index());
    expect(sorted(t.users)).toEqual(['ana', 'aud', 'bo', 'olga']);
    expect(sorted(t.groups)).toEqual(['eng', 'sre']);
    expect(sorted(t.keys)).toEqual(['ana-scoped', 'audit-ci', 'bo-grouped', 'login-sam', 'pay-ci', 'pay-deploy', 'robot']);
  });

  it('both versions of a changed team count: an owner user only before, a rule only after', () => {
    const before = { spec: { owner: { user: 'old-owner' } } } as Team;
    const after = { spec: { access: [{ verbs: ['get'], users: ['new-reader'] }], users: ['member'] } } as Team;
    const t = touchedIdentities(['pay'], [], (w) => (w === 0 ? before : after), index());
    expect(sorted(t.users)).toEqual(['member', 'new-reader', 'old-owner']);
    expect(sorted(t.groups)).toEqual([]);
    expect(sorted(t.keys)).toEqual(['pay-ci', 'pay-deploy']);
  });

  it('a key the plan writes is asked about when it is its own identity on either side; a plain or Login key is its user', () => {
    const t = touchedIdentities(
      [],
      [
        { before: key('a', { user: 'ana' }), after: key('a', { user: 'ana', scope: { roles: [{ role: 'cli' }] } }) },
        { before: key('b', { user: 'ana', groups: ['eng'] }), after: key('b', { user: 'ana' }) },
        { after: key('c', { team: 'pay' }) },
        { before: key('d', { user: 'ana' }) },
        { before: key('e', { user: 'ana' }), after: key('e', { user: 'ana', disabled: true }) },
        { after: key('login-f', { type: 'Login', user: 'sam', identity: { groups: ['eng'] } }) },
      ],
      () => undefined,
      index(),
    );
    expect(sorted(t.keys)).toEqual(['a', 'b', 'c']);
    expect(t.users.size + t.groups.size).toBe(0);
  });
});
