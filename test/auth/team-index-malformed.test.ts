/**
 * A Team of a shape the schema would refuse (written past the API: a restore, a hand edit) neither
 * stops the team index nor grants anything through its malformed fields: one string where a list
 * of names goes (`approvers`, a rule's `users`, `spec.users`), a number, a null rule, an owner team
 * named ''. Before, such a Team stopped the index for good (every write then waited for it and got
 * 503), a string matched names by substring ("alice".includes("ali") gave user ali the rule's
 * verbs), and a caller in a team named '' approved the requests of a Team owned by ''.
 */
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { isApprover } from '../../src/api/access-request.js';
import { memberBy } from '../../src/auth/grants.js';
import type { Team } from '../../src/api/types.js';
import { TeamIndex, teamWorldOf } from '../../src/auth/team-index.js';
import { Authorizer } from '../../src/auth/authorize.js';
import type { Identity } from '../../src/auth/identity.js';
import { createRegistry } from '../../src/registry/registry.js';
import { MemoryStore } from '../../src/store/backends/memory.js';

const team = (name: string, spec: object) => ({ apiVersion: 'management.service/v1', kind: 'Team', metadata: { name, uid: `uid-${name}` }, spec }) as unknown as Team;
const stops: (() => void)[] = [];
afterEach(() => stops.splice(0).forEach((s) => s()));

/** A team index following a store the test writes to directly (past the API). */
async function indexOver() {
  const store = new MemoryStore();
  const index = new TeamIndex(createRegistry(store).teams, pino({ level: 'silent' }));
  await index.start();
  stops.push(() => index.stop());
  return { store, index };
}

describe('the team index and malformed Teams', () => {
  it('follows the store past a Team whose approvers is one string, and approves through none of it', async () => {
    const { store, index } = await indexOver();
    await store.create('/teams/bad', team('bad', { accessRequests: { approvers: 'alice' } }));
    await store.create('/teams/empty-owner', team('empty-owner', { owner: { team: '' } }));
    await store.create('/teams/good', team('good', { accessRequests: { approvers: ['alice'] } }));
    await index.caughtUp();
    expect(index.get('good')?.metadata.name).toBe('good');
    expect([...index.approving('alice', [])]).toEqual(['good']);
    // "alice".includes("ali") would have been an approver by substring.
    expect(isApprover(index.get('bad'), 'ali', [])).toBe(false);
    expect(isApprover(index.get('bad'), 'alice', [])).toBe(false);
    expect(isApprover(index.get('empty-owner'), 'bo', [''])).toBe(false);
    expect([...index.approving('bo', [''])]).toEqual([]);
    // The access review's fixed world reads the same Teams.
    const world = teamWorldOf([index.get('bad')!, index.get('empty-owner')!, index.get('good')!]);
    expect([...world.approving('alice', [])]).toEqual(['good']);
  });

  it('follows the store past rules and members of other shapes, and grants nothing by substring', async () => {
    const { store, index } = await indexOver();
    await store.create('/teams/substring', team('substring', { users: 'alice', access: [{ verbs: ['update'], users: 'alice', teams: 'ops' }] }));
    await store.create('/teams/null-rule', team('null-rule', { access: [null, { verbs: ['get'], users: ['bo'] }] }));
    await store.create('/teams/numbers', team('numbers', { users: 5, groups: 7, access: 5, clusterRoles: 'management-admin' }));
    await store.create('/teams/good', team('good', { users: ['alice'], access: [{ verbs: ['get'], users: ['ali'] }] }));
    await index.caughtUp();
    expect(index.get('good')?.metadata.name).toBe('good');
    const authz = new Authorizer(index, 'management.service');
    const who = (user: string, teams: string[] = []): Identity => ({ name: user, user, groups: [], teams, clusterRoles: new Set(), keyName: 'k' });
    expect([...authz.teamVerbs(who('ali', ['o']), index.get('substring'))]).toEqual([]);
    expect([...authz.teamVerbs(who('alice'), index.get('substring'))]).toEqual([]);
    expect(index.teamsOf('ali', [])).toEqual([]);
    expect(index.teamsOf('alice', [])).toEqual(['good']);
    // The well-formed rule after a null one still grants, and the null one nothing.
    expect([...authz.teamVerbs(who('bo'), index.get('null-rule'))]).toEqual(['get']);
    expect([...authz.teamVerbs(who('ali'), index.get('good'))]).toEqual(['get']);
    expect(index.get('numbers')?.spec?.clusterRoles).toEqual([]);
    // The same Team read as stored (an object's own authorization reads it so): no member by substring.
    expect(memberBy(team('raw', { users: 'alice', groups: 'ops' }), 'ali', ['o', 'p'])).toEqual([]);
    expect([...authz.teamVerbs(who('ali', ['o']), team('raw', { access: [null, { verbs: ['update'], users: 'alice', teams: 'ops' }] }))]).toEqual([]);
    expect([...index.referencing('ali', [])]).toEqual(['good']);
  });
});
