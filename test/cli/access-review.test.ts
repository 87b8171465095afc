/**
 * `teamkeys access-review` as a user runs it: the built CLI against the embedded store and against
 * a real `teamkeys serve` process, in markdown, CSV and JSON, with --since, and refused to a key
 * that cannot read everything.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReviewDocument } from '../../src/review/model.js';
import { startServe, type Served } from '../server/serve-process.js';
import { bin, root, teamkeys } from '../support/cli.js';

type WithSince = ReviewDocument & { since?: { granted: { identity: string; verb: string; object: string; path: string }[]; revoked: { identity: string; verb: string; object: string; path: string }[]; keys: { key: string; change: string }[] } };

const grantOf = (doc: ReviewDocument, id: string, object: string) => doc.identities.find((i) => i.id === id)?.grants.filter((g) => g.object === object) ?? [];

describe('teamkeys access-review on the embedded store', () => {
  const dir = mkdtempSync(join(tmpdir(), 'teamkeys-review-'));
  const store = `sqlite:${join(dir, 'store.db')}`;
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  beforeAll(() => {
    const created = teamkeys(['create', '-f', join(root, 'examples/gitops'), '--store', store]);
    expect(created.code).toBe(0);
  });

  it('prints every identity with its grants, paths and keys as JSON, with no progress on a pipe', () => {
    const r = teamkeys(['access-review', '--store', store, '-o', 'json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as ReviewDocument;
    expect(doc).toMatchObject({ kind: 'AccessReview', version: 1, source: store, group: 'management.service', counts: { teams: 3, keys: 2 } });
    expect(doc.identities.map((i) => i.id)).toEqual([
      'user:ana', 'user:bo', 'user:carla', 'group:payments-devs', 'group:platform', 'team:auditors', 'team:payments', 'team:platform', 'key:payments-ci',
    ]);
    // ana owns platform by name; carla reads every team through the auditors' role.
    expect(grantOf(doc, 'user:ana', 'teams/platform')).toEqual([
      { object: 'teams/platform', verbs: ['get', 'list', 'watch', 'update', 'patch', 'delete'], path: 'owner of team platform (user)', via: [{ step: 'owner', of: 'platform', user: 'ana' }] },
    ]);
    expect(grantOf(doc, 'user:carla', 'teams/*').map((g) => [g.verbs.join(','), g.path])).toEqual([
      ['get,list,watch', 'member of team auditors by users > cluster role teams-viewer of team auditors'],
      ['list,watch', 'open list (shows only what may be read)'],
    ]);
    // The platform group edits payments through the access rule naming its team.
    expect(grantOf(doc, 'group:platform', 'teams/payments').map((g) => g.path)).toContain('member of team platform by group platform > access rule platform-can-edit of team payments (team platform)');
    // Keys: ana's laptop acts as ana; the payments CI key is narrowed to reads by its scope.
    const ana = doc.identities.find((i) => i.id === 'user:ana')!;
    expect(ana.keys).toEqual([expect.objectContaining({ name: 'ana-laptop', type: 'User', state: 'active', rights: 'identity', scope: null, lastUsedAt: null })]);
    expect(ana.keys[0]!.expiresAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    const ci = doc.identities.find((i) => i.id === 'key:payments-ci')!;
    expect(ci.keys[0]).toMatchObject({ rights: 'own', scope: 'cli (read-only)' });
    expect(ci.grants.flatMap((g) => g.verbs).every((v) => ['get', 'list', 'watch'].includes(v))).toBe(true);
    expect(ci.grants[0]!.path).toBe('key payments-ci scope: cli (read-only) > is team payments > cluster role teams-viewer of team payments');
  });

  it('prints markdown sections and an RFC 4180 CSV whose cells a spreadsheet cannot run', () => {
    const md = teamkeys(['access-review', '--store', store]);
    expect(md.code).toBe(0);
    expect(md.stdout).toContain('# Access review');
    expect(md.stdout).toContain('### user:carla');
    // Read on a terminal (Markdown is the default there) as rendered: objects as code spans, a
    // path's steps joined by an arrow, no character references (issue 40: `teams/&#42;`).
    expect(md.stdout).toContain('| `teams/*` | get, list, watch | member of team auditors by users → cluster role teams-viewer of team auditors |');
    expect(md.stdout).not.toMatch(/&#\d+;|&gt;|&lt;|&amp;/);
    // An access rule by its name, as the Team writes it.
    expect(md.stdout).toContain('member of team platform by group platform → access rule platform-can-edit of team payments (team platform)');
    expect(md.stdout).toMatch(/\| ana-laptop \| User \| 0d \| - \| never \| \S+ \| active \| - \| identity \|/);
    // A key without spec.type is a User key, as teamkeys keys says, not `-`.
    const untyped = join(dir, 'untyped.yaml');
    writeFileSync(untyped, 'apiVersion: management.service/v1\nkind: OwnedAccessKey\nmetadata:\n  name: bo-untyped\nspec:\n  user: bo\n');
    expect(teamkeys(['create', '-f', untyped, '--store', store]).code).toBe(0);
    const typed = teamkeys(['access-review', '--store', store]);
    expect(typed.stdout).toMatch(/\| bo-untyped \| User \| 0d \|/);
    expect(teamkeys(['keys', '--store', store]).stdout).toMatch(/^bo-untyped\s+User\s/m);
    expect(teamkeys(['delete', 'ownedaccesskey', 'bo-untyped', '--store', store]).code).toBe(0);

    const formula = join(dir, 'formula.yaml');
    writeFileSync(formula, 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: sheet\nspec:\n  users: ["=HYPERLINK(\\"x\\")", "a,b"]\n  owner:\n    user: "-2+3"\n');
    expect(teamkeys(['create', '-f', formula, '--store', store]).code).toBe(0);
    const csv = teamkeys(['access-review', '--store', store, '-o', 'csv']);
    expect(csv.code).toBe(0);
    const lines = csv.stdout.split('\r\n');
    expect(lines[0]).toBe('identity,verb,object,path');
    expect(lines.at(-1)).toBe('');
    expect(lines).toContain('user:carla,get,teams/*,member of team auditors by users > cluster role teams-viewer of team auditors');
    expect(lines).toContain('"user:a,b",get,teams/*,open list (shows only what may be read)'.replace('get', 'list'));
    expect(lines).toContain('"user:=HYPERLINK(""x"")",list,teams/*,open list (shows only what may be read)');
    expect(lines).toContain('user:-2+3,get,teams/sheet,owner of team sheet (user)');
    expect(lines.every((l) => !/^[=+\-@]|,[=+\-@]/.test(l.replace(/"[^"]*"/g, '""')))).toBe(true);
  });

  it('--since names what was granted and revoked since a previous review', () => {
    const previous = join(dir, 'previous.json');
    const first = teamkeys(['access-review', '--store', store, '-o', 'json']);
    writeFileSync(previous, first.stdout);
    // carla leaves the auditors; dana joins them.
    const auditors = join(dir, 'auditors.yaml');
    writeFileSync(auditors, 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: auditors\nspec:\n  owner:\n    team: platform\n  users: [dana]\n  clusterRoles:\n    - name: teams-viewer\n');
    expect(teamkeys(['delete', 'team', 'auditors', '--store', store]).code).toBe(0);
    expect(teamkeys(['create', '-f', auditors, '--store', store]).code).toBe(0);
    const r = teamkeys(['access-review', '--store', store, '-o', 'json', '--since', previous]);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as WithSince;
    const path = 'member of team auditors by users > cluster role teams-viewer of team auditors';
    expect(doc.since!.granted.filter((g) => g.path === path)).toEqual(['get', 'list', 'watch'].map((verb) => ({ identity: 'user:dana', verb, object: 'teams/*', path })));
    expect(doc.since!.revoked.filter((g) => g.path === path)).toEqual(['get', 'list', 'watch'].map((verb) => ({ identity: 'user:carla', verb, object: 'teams/*', path })));
    // carla's own keys, named by her being in a team: she is now named nowhere, so her rows go.
    expect(doc.since!.granted.every((g) => g.identity !== 'user:carla')).toBe(true);
    const md = teamkeys(['access-review', '--store', store, '--since', previous]);
    expect(md.stdout).toContain('## Changes since the review of');
    expect(md.stdout).toContain(`| granted | user:dana | get | \`teams/*\` | ${path.replace(' > ', ' → ')} |`);
    expect(md.stdout).toContain(`| revoked | user:carla | get | \`teams/*\` | ${path.replace(' > ', ' → ')} |`);
    const csv = teamkeys(['access-review', '--store', store, '-o', 'csv', '--since', previous]);
    expect(csv.stdout.split('\r\n')).toContain(`granted,user:dana,get,teams/*,${path}`);
  });

  it.skipIf(!existsSync('/usr/bin/script'))('shows progress on stderr when it is a terminal, and clears it before the review', () => {
    // script(1) gives the command a terminal; stdout goes to a file, so what it records is stderr.
    const out = join(dir, 'tty-review.json');
    const keyFile = join(tmpdir(), `teamkeys-test-${process.pid}`, 'encryption.yaml');
    const r = spawnSync('script', ['-qec', `${process.execPath} ${bin} access-review --store ${store} -o json > ${out}`, '/dev/null'], {
      encoding: 'utf8',
      env: { ...process.env, TEAMKEYS_STORE: '', TEAMKEYS_ENCRYPTION_KEY_FILE: keyFile },
      timeout: 30_000,
    });
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('access-review: reading Teams…');
    expect(r.stdout).toMatch(/access-review: \d+ Teams, 2 keys; reviewed \d+\/\d+ identities and keys/);
    expect(r.stdout.endsWith('\r\x1b[2K')).toBe(true);
  });

  it('refuses a --since file that is not a review, and an unknown format, as file:line:col and exit 1', () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{\n  "kind": "AccessReview",\n  oops\n}');
    const r = teamkeys(['access-review', '--store', store, '--since', bad]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^error: ${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:3:3: not valid JSON`));
    writeFileSync(bad, '{"kind": "Team"}');
    expect(teamkeys(['access-review', '--store', store, '--since', bad]).stderr).toContain(`${bad}:1:1: not an access review`);
    expect(teamkeys(['access-review', '--store', store, '-o', 'yaml']).stderr).toContain('--output must be markdown, csv or json, not "yaml"');
  });
});

describe('teamkeys access-review against a served process', () => {
  let served: Served;
  let dir: string;
  const api = () => `${served.url}/apis/management.service/v1`;
  const post = async (path: string, body: object, token = served.adminKey) =>
    fetch(`${api()}/${path}`, { method: 'POST', headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });

  beforeAll(async () => {
    served = await startServe(['--insecure-http']);
    dir = mkdtempSync(join(tmpdir(), 'teamkeys-review-serve-'));
    expect((await post('teams', { metadata: { name: 'payments' }, spec: { users: ['eve'], groups: ['pay-devs'], access: [{ verbs: ['get', 'update'], users: ['finn'] }] } })).status).toBe(201);
    expect((await post('teams', { metadata: { name: 'readers' }, spec: { users: ['rita'], clusterRoles: [{ name: 'teams-viewer' }] } })).status).toBe(201);
    expect((await post('ownedaccesskeys', { metadata: { name: 'finn-ci' }, spec: { user: 'finn', key: `Finn${'f'.repeat(40)}`, scope: { roles: [{ role: 'cli' }] } } })).status).toBe(201);
    expect((await post('ownedaccesskeys', { metadata: { name: 'rita-key' }, spec: { user: 'rita', key: `Rita${'r'.repeat(40)}` } })).status).toBe(201);
    writeFileSync(join(dir, 'admin.token'), served.adminKey);
    writeFileSync(join(dir, 'rita.token'), `Rita${'r'.repeat(40)}`);
  }, 30_000);
  afterAll(async () => {
    await served?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('reviews everything with an administrator key, in the same shape as the embedded store', () => {
    const r = teamkeys(['access-review', '--server', served.url, '--token-file', join(dir, 'admin.token'), '-o', 'json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as ReviewDocument;
    expect(doc.source).toBe(served.url);
    expect(grantOf(doc, 'user:finn', 'teams/payments')).toEqual([
      { object: 'teams/payments', verbs: ['get', 'update'], path: 'access rule 0 of team payments (user)', via: [{ step: 'access', of: 'payments', rule: 0, user: 'finn' }] },
    ]);
    expect(grantOf(doc, 'key:finn-ci', 'teams/payments').map((g) => [g.verbs, g.path])).toEqual([[['get'], 'key finn-ci scope: cli (read-only) > access rule 0 of team payments (user)']]);
    expect(doc.identities.find((i) => i.id === 'user:admin')?.roles).toEqual(['management-admin']);
    expect(doc.identities.find((i) => i.id === 'group:pay-devs')?.memberOf).toEqual([{ team: 'payments', by: ['group:pay-devs'] }]);
  });

  it('refuses a key that cannot read every key, naming what is missing, and prints nothing', () => {
    const r = teamkeys(['access-review', '--server', served.url, '--token-file', join(dir, 'rita.token')]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      'error: access-review needs a reader of everything, and "rita" lacks "get" on every OwnedAccessKey (cluster role accesskeys-admin or management-admin): use a key of a member of a Team granting management-admin (or teams-viewer and accesskeys-admin), or run it against the embedded store (--store)\n',
    );
  });
});
