/** The review's renderings: JSON written in pieces is JSON.stringify's text exactly, and CSV cells a spreadsheet cannot run. */
import { describe, expect, it } from 'vitest';
import { computeReview } from '../../src/review/compute.js';
import { diffReviews } from '../../src/review/diff.js';
import { csvCell, renderJson } from '../../src/review/render.js';
import type { OwnedAccessKey, Team } from '../../src/api/types.js';

const team = (name: string, spec: object) => ({ apiVersion: 'management.service/v1', kind: 'Team', metadata: { name, uid: `uid-${name}` }, spec }) as Team;
const key = (name: string, spec: object) => ({ apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', metadata: { name, creationTimestamp: '2026-11-01T00:00:00Z' }, spec }) as OwnedAccessKey;
const review = (teams: Team[], keys: OwnedAccessKey[]) => computeReview({ teams, keys, group: 'management.service', source: 'memory:', now: new Date('2026-11-27T00:00:00Z') });

describe('access-review renderings', () => {
  it('writes JSON in pieces that join to JSON.stringify(doc, null, 2), with and without --since and identities', () => {
    // Group g is in no team: the key adds nothing to ana's rights (rights "identity").
    const before = review([team('ops', { users: ['ana'], clusterRoles: [{ name: 'teams-viewer' }] })], [key('k', { user: 'ana', groups: ['g'] })]);
    const after = review([team('ops', { users: ['bo'] })], []);
    const empty = review([], []);
    for (const doc of [before, after, empty]) expect(renderJson(doc)).toBe(`${JSON.stringify(doc, null, 2)}\n`);
    const diff = diffReviews(before, after);
    expect(renderJson(after, diff)).toBe(`${JSON.stringify({ ...after, since: diff }, null, 2)}\n`);
    expect(diff.revoked).toContainEqual({ identity: 'user:ana', verb: 'get', object: 'teams/*', path: 'member of team ops by users > cluster role teams-viewer of team ops' });
    expect(diff.keys).toEqual([{ identity: 'user:ana', key: 'k', change: 'removed', before: { state: 'active', rights: 'identity', scope: null, groups: ['g'], expiresAt: null } }]);
  });

  it('quotes CSV cells as RFC 4180 says and defuses formulas', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('two\nlines')).toBe('"two\nlines"');
    for (const f of ['=1+1', '+1', '-1', '@SUM(A1)', '\t=1', '\r=1']) expect(csvCell(f).startsWith(`'${f[0]}`) || csvCell(f).startsWith(`"'${f[0]}`)).toBe(true);
    expect(csvCell('=HYPERLINK("x","y")')).toBe('"\'=HYPERLINK(""x"",""y"")"');
  });
});
