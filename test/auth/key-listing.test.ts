/**
 * The pure parts of `teamkeys keys`: a key's row at a given time, the filters, and the scope
 * summary, which must say of every scope what the authorizer does with it.
 */
import { describe, expect, it } from 'vitest';
import type { OwnedAccessKey, OwnedAccessKeySpec } from '../../src/api/types.js';
import { matchesKeyFilter } from '../../src/auth/key-filter.js';
import { keyRow } from '../../src/auth/key-listing.js';
import { scopeDenial, type Scope } from '../../src/auth/scope.js';
import { scopeSummary } from '../../src/auth/scope-summary.js';
import { renderKeysMarkdown, renderKeysTable, rotationText } from '../../src/cli/keys-output.js';
import { day, hour, ManualClock } from '../support/clock.js';
import { accessKey } from '../support/manifests.js';

const created = '2026-01-01T00:00:00Z';
function key(name: string, spec: Partial<OwnedAccessKeySpec>, status?: Record<string, unknown>): OwnedAccessKey {
  return { ...accessKey(name, { user: 'ana', ...spec }, { creationTimestamp: created }), ...(status ? { status } : {}) } as OwnedAccessKey;
}

describe('scope summary agrees with the authorizer', () => {
  const read = { verb: 'get', group: 'management.service', resource: 'teams' } as const;
  const write = { verb: 'delete', group: 'management.service', resource: 'teams', name: 'x' } as const;
  const cases: { scope: Scope | undefined; summary: string; reads: boolean; writes: boolean }[] = [
    { scope: undefined, summary: 'full', reads: true, writes: true },
    { scope: { roles: [], projects: [] }, summary: 'full', reads: true, writes: true },
    { scope: { roles: [{ role: 'cli' }] }, summary: 'cli (read-only)', reads: true, writes: false },
    { scope: { allowServiceCli: true }, summary: 'cli (read-only)', reads: true, writes: false },
    { scope: { rules: [{ verbs: ['delete'], resources: [{ group: 'management.service', resources: ['teams'] }] }, { requestTargets: ['Management'], verbs: ['get'] }] }, summary: 'rules: 2', reads: true, writes: true },
    { scope: { allowServiceCli: true, rules: [{ verbs: ['delete'] }] }, summary: 'cli (read-only), rules: 1', reads: true, writes: true },
    // A rule for a cluster, or for other request targets, never matches this API: not counted.
    { scope: { rules: [{ verbs: ['*'], cluster: 'prod' }, { requestTargets: ['Cluster'], verbs: ['*'] }] }, summary: 'rules only: no management access', reads: false, writes: false },
    { scope: { projects: [{ project: 'p1' }] } as Scope, summary: 'projects only: no management access', reads: false, writes: false },
    { scope: { projects: [{ project: 'p1' }], spaces: [{ space: 's' }], roles: [{ role: 'agent' }] } as Scope, summary: 'roles, projects, spaces only: no management access', reads: false, writes: false },
  ];
  it.each(cases)('$summary', ({ scope, summary, reads, writes }) => {
    expect(scopeSummary(scope)).toBe(summary);
    expect(scopeDenial(scope, read) === undefined).toBe(reads);
    expect(scopeDenial(scope, write) === undefined).toBe(writes);
  });
});

describe('a key row', () => {
  const clock = new ManualClock('2026-01-11T00:00:00Z');

  it('names the owner, type, ages, last use and expiry in ISO times and seconds', () => {
    const row = keyRow(key('ci', { team: 'payments', user: undefined, ttl: 30 * 86_400 }, { lastActivity: '2026-01-10T00:00:00Z' }), clock.now());
    expect(row).toEqual({
      name: 'ci',
      displayName: null,
      type: 'User',
      owner: { kind: 'team', name: 'payments' },
      createdAt: created,
      ageSeconds: 10 * 86_400,
      lastUsedAt: '2026-01-10T00:00:00Z',
      unusedSeconds: 86_400,
      expiresAt: '2026-01-31T00:00:00Z',
      expiresInSeconds: 20 * 86_400,
      expired: false,
      disabled: false,
      scope: 'full',
      rotation: { state: 'none', rotatedAt: null, previousValidUntil: null, overlapSeconds: null, lastUsedValue: null },
      valueAgeSeconds: 10 * 86_400,
    });
    expect(JSON.stringify(row)).not.toContain('key');
  });

  it('a sign-in key is Login, a subject key names its subject, a key with ttlAfterLastActivity expires from its last use', () => {
    expect(keyRow(key('login-ana', { type: 'Login' }), clock.now())).toMatchObject({ type: 'Login', owner: { kind: 'user', name: 'ana' }, lastUsedAt: null, unusedSeconds: 10 * 86_400, expiresAt: null });
    expect(keyRow(key('bot', { user: undefined, subject: 'ci-bot' }), clock.now()).owner).toEqual({ kind: 'subject', name: 'ci-bot' });
    const idle = keyRow(key('idle', { ttl: 86_400, ttlAfterLastActivity: true }, { lastActivity: '2026-01-10T12:00:00Z' }), clock.now());
    expect(idle).toMatchObject({ expiresAt: '2026-01-11T12:00:00Z', expiresInSeconds: 12 * 3600, expired: false });
  });

  it('rotation: none, awaiting delivery, overlap until, rotated; the value age counts from the rotation', () => {
    const at = (rotation: Record<string, unknown>) => keyRow(key('k', {}, { rotation }), clock.now());
    const awaiting = at({ rotatedAt: '2026-01-10T00:00:00Z', overlapSeconds: 3600, awaitingConfirmation: true });
    expect(awaiting.rotation).toEqual({ state: 'awaiting-delivery', rotatedAt: '2026-01-10T00:00:00Z', previousValidUntil: null, overlapSeconds: 3600, lastUsedValue: null });
    expect(rotationText(awaiting)).toBe('awaiting delivery');
    expect(awaiting.valueAgeSeconds).toBe(86_400);
    const overlap = at({ rotatedAt: '2026-01-10T23:30:00Z', overlapSeconds: 3600, previousValidUntil: '2026-01-11T00:30:00Z', lastUsedValue: 'Previous' });
    expect(overlap.rotation).toMatchObject({ state: 'overlap', previousValidUntil: '2026-01-11T00:30:00Z', lastUsedValue: 'Previous' });
    expect(rotationText(overlap)).toBe('overlap until 2026-01-11T00:30:00Z');
    clock.advance(hour);
    const after = keyRow(key('k', {}, { rotation: { rotatedAt: '2026-01-10T23:30:00Z', overlapSeconds: 3600, previousValidUntil: '2026-01-11T00:30:00Z' } }), clock.now());
    expect(rotationText(after)).toBe('rotated 2026-01-10T23:30:00Z');
    expect(after.valueAgeSeconds).toBe(5400);
    expect(rotationText(keyRow(key('k', {}), clock.now()))).toBe('—');
  });
});

describe('--expiring and --unused, through a clock', () => {
  const expiring = (k: OwnedAccessKey, now: Date, ms: number) => matchesKeyFilter(k, { expiringWithinMs: ms }, now);
  const unused = (k: OwnedAccessKey, now: Date, ms: number) => matchesKeyFilter(k, { unusedForMs: ms }, now);

  it('a 3-day key enters a 1-day window after 2 days and stays listed once expired (until removed)', () => {
    const clock = new ManualClock(created);
    const k = key('k', { ttl: 3 * 86_400 });
    expect(expiring(k, clock.now(), day)).toBe(false);
    clock.advance(2 * day);
    expect(expiring(k, clock.now(), day)).toBe(true);
    clock.advance(5 * day);
    expect(expiring(k, clock.now(), day)).toBe(true);
    expect(keyRow(k, clock.now())).toMatchObject({ expired: true, expiresInSeconds: -4 * 86_400 });
    expect(expiring(key('forever', {}), clock.now(), 3650 * day)).toBe(false);
  });

  it('unused counts from the last use, or from creation when never used', () => {
    const clock = new ManualClock('2026-04-01T00:00:01Z'); // just over 90 days after creation
    expect(unused(key('never', {}), clock.now(), 90 * day)).toBe(true);
    expect(unused(key('used', {}, { lastActivity: '2026-03-01T00:00:00Z' }), clock.now(), 90 * day)).toBe(false);
    clock.advance(60 * day);
    expect(unused(key('used', {}, { lastActivity: '2026-03-01T00:00:00Z' }), clock.now(), 90 * day)).toBe(true);
  });

  it('filters combine: every given condition holds', () => {
    const now = new Date('2026-01-11T00:00:00Z');
    const keys = [
      key('ana-soon', { ttl: 12 * 86_400 }),
      key('ana-late', { ttl: 60 * 86_400 }),
      key('ana-used', { ttl: 12 * 86_400 }, { lastActivity: '2026-01-10T00:00:00Z' }),
      key('bo-soon', { user: 'bo', ttl: 12 * 86_400 }),
      key('team-soon', { user: undefined, team: 'payments', ttl: 12 * 86_400 }),
    ];
    const names = (f: Parameters<typeof matchesKeyFilter>[1]) => keys.filter((k) => matchesKeyFilter(k, f, now)).map((k) => k.metadata.name);
    expect(names({})).toHaveLength(5);
    expect(names({ expiringWithinMs: 14 * day })).toEqual(['ana-soon', 'ana-used', 'bo-soon', 'team-soon']);
    expect(names({ expiringWithinMs: 14 * day, unusedForMs: 7 * day, user: 'ana' })).toEqual(['ana-soon']);
    expect(names({ team: 'payments' })).toEqual(['team-soon']);
    expect(names({ team: 'payments', unusedForMs: 30 * day })).toEqual([]);
    // A subject's keys, and only theirs (`teamkeys keys --subject`).
    const bot = key('bot', { user: undefined, subject: 'ci-bot' });
    expect([bot, ...keys].filter((k) => matchesKeyFilter(k, { subject: 'ci-bot' }, now)).map((k) => k.metadata.name)).toEqual(['bot']);
    expect(matchesKeyFilter(bot, { user: undefined }, now)).toBe(true);
  });
});

describe('rendering', () => {
  const now = new Date('2026-01-11T00:00:00Z');
  it('the table reads as words; markdown escapes what users wrote', () => {
    const rows = [keyRow(key('a|b', { displayName: 'x', ttl: 86_400, disabled: true }), now), keyRow(key('c', { user: 'ev*l<b>', scope: { roles: [{ role: 'cli' }] } }, { lastActivity: '2026-01-10T22:00:00Z' }), now)];
    const table = renderKeysTable(rows).split('\n');
    expect(table[0]).toMatch(/^NAME\s+TYPE\s+OWNER\s+AGE\s+LAST USE\s+EXPIRES\s+DISABLED\s+SCOPE\s+ROTATION\s+VALUE AGE\s+NEXT ROTATION$/);
    expect(table[1]).toMatch(/^a\|b\s+User\s+user:ana\s+10d\s+never\s+expired 9d ago\s+true\s+full\s+—\s+10d\s+—$/);
    expect(table[2]).toMatch(/^c\s+User\s+user:ev\*l<b>\s+10d\s+120m ago\s+never\s+false\s+cli \(read-only\)\s+—\s+10d\s+—$/);
    const md = renderKeysMarkdown(rows).split('\n');
    expect(md[2]).toBe('| a&#124;b | User | user:ana | 10d | never | expired 9d ago | true | full | — | 10d | — |');
    expect(md[3]).toContain('| user:ev&#42;l&lt;b&gt; |');
    expect(renderKeysTable(rows, true).split('\n')[1]).toMatch(/^\u001b\[31ma\|b/);
    expect(renderKeysTable([])).toBe('No access keys found.');
  });
});
