/**
 * The access change as data and as text, without a server: a Login key's person is one identity
 * with their provider's groups; a change past a size is folded in Markdown and cut in the terminal,
 * with every entry still in the data (report.json).
 */
import { describe, expect, it } from 'vitest';
import type { OwnedAccessKey, Team } from '../../src/api/types.js';
import { accessChange } from '../../src/gitops/plan/access-change.js';
import type { Plan } from '../../src/gitops/plan/plan.js';
import { accessChangeMarkdown, accessChangeText } from '../../src/gitops/report/access-change.js';

const team = (name: string, spec: Team['spec']): Team => ({ apiVersion: 'management.service/v1', kind: 'Team', metadata: { name, uid: `uid-${name}`, resourceVersion: '1' }, spec }) as Team;
const update = (name: string, patch: unknown[]): Plan => ({ sourceId: 's', actions: [{ kind: 'Team', plural: 'teams', name, type: 'update', changes: [], drift: false, patch: [{ op: 'replace', path: '/metadata/resourceVersion', value: '1' }, ...patch] }] });

describe('the access change without a server', () => {
  it("a Login key's person is one identity, with the groups they signed in with", () => {
    const login = { apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', metadata: { name: 'login-lena-1', uid: 'k1' }, spec: { type: 'Login', user: 'lena', identity: { groups: ['eng'] } } } as unknown as OwnedAccessKey;
    const again = { ...login, metadata: { name: 'login-lena-2', uid: 'k2' } } as OwnedAccessKey;
    const c = accessChange({ teams: [team('ops', { users: ['olga'] })], keys: [login, again], plan: update('ops', [{ op: 'add', path: '/spec/groups', value: ['eng'] }, { op: 'add', path: '/spec/clusterRoles', value: [{ name: 'teams-viewer' }] }]), group: 'management.service', now: new Date() });
    const people = [...new Set(c.gains.map((g) => g.identity))];
    expect(people).toEqual(['group:eng', 'signIn:lena[eng]', 'user:olga']);
    expect(accessChangeText(c)).toContain('  + lena (signed in with group eng) gains cluster role teams-viewer (via team ops (group eng))');
  });

  it('past 60 lines the terminal says how many more, Markdown folds 400 and counts the rest, and the data holds them all', () => {
    const users = Array.from({ length: 600 }, (_, i) => `user-${String(i).padStart(3, '0')}`);
    const c = accessChange({ teams: [team('big', { users: [] })], keys: [], plan: update('big', [{ op: 'replace', path: '/spec/users', value: users }, { op: 'add', path: '/spec/clusterRoles', value: [{ name: 'teams-viewer' }] }]), group: 'management.service', now: new Date() });
    // Each user: the role held, and get/list/watch on every Team through it.
    expect(c.gains).toHaveLength(600 * 4);
    expect(c.identitiesChanged).toBe(600);
    const text = accessChangeText(c);
    expect(text.filter((l) => l.startsWith('  + '))).toHaveLength(60);
    expect(text).toContain('  ... and 1140 more line(s): the JSON report (--report-json) lists every one.');
    const markdown = accessChangeMarkdown(c).join('\n');
    expect(markdown).toContain('<details><summary>More access changes</summary>');
    expect(markdown).toContain('740 more line(s) are in the JSON report (`accessChange`).');
    expect(markdown.split('\n').filter((l) => l.startsWith('  - gains'))).toHaveLength(460);
  });
});
