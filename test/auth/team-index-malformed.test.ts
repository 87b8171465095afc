/**
 * A Team of a shape the schema would refuse (written past the API: a restore, a hand edit) neither
 * stops the team index nor approves anything: `accessRequests.approvers` as one string, an owner
 * team named ''. Before, the string stopped the index for good (every write then waited for it and
 * got 503), and a caller in a team named '' approved the requests of a Team owned by ''.
 */
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { isApprover } from '../../src/api/access-request.js';
import type { Team } from '../../src/api/types.js';
import { TeamIndex, teamWorldOf } from '../../src/auth/team-index.js';
import { createRegistry } from '../../src/registry/registry.js';
import { MemoryStore } from '../../src/store/backends/memory.js';

const team = (name: string, spec: object) => ({ apiVersion: 'management.service/v1', kind: 'Team', metadata: { name, uid: `uid-${name}` }, spec }) as unknown as Team;
const stops: (() => void)[] = [];
afterEach(() => stops.splice(0).forEach((s) => s()));

describe('the team index and malformed Teams', () => {
  it('follows the store past a Team whose approvers is one string, and approves through none of it', async () => {
    const store = new MemoryStore();
    const registry = createRegistry(store);
    const index = new TeamIndex(registry.teams, pino({ level: 'silent' }));
    await index.start();
    stops.push(() => index.stop());
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
});
