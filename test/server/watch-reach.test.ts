/**
 * Issue 24, points 3, 4, 6 and 10 (watches), over real HTTP against `teamkeys serve`: a watch ends
 * within a second of its key expiring, being disabled or deleted, or losing what it was opened with;
 * an object leaving a reader's view arrives as its previous version; past revisions show a reader
 * who may not read every object nothing of an object deleted or replaced since; watch duration is
 * capped by --min-request-timeout; watches per user and in total are bounded.
 */
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { teamkeys } from '../support/cli.js';
import { startServe, type Served } from './serve-process.js';
import { openWatch, type Watching } from './watch-client.js';

const adminKey = `WatchReach${'r'.repeat(50)}`;
const group = 'management.service';
const merge = 'application/merge-patch+json';

type Body = { metadata?: { name?: string; uid?: string; resourceVersion?: string; continue?: string; creationTimestamp?: string }; spec?: Record<string, unknown>; items?: Body[]; message?: string };

function client(served: () => Served) {
  const api = () => `${served().url}/apis/${group}/v1`;
  const call = async (method: string, path: string, key = adminKey, body?: unknown, type = 'application/json') => {
    const res = await fetch(`${api()}${path}`, {
      method,
      headers: { Authorization: `Bearer ${key}`, ...(body !== undefined ? { 'Content-Type': type } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    return { status: res.status, body: (await res.json()) as Body };
  };
  const makeKey = async (name: string, spec: Record<string, unknown>) => {
    const res = await call('POST', '/ownedaccesskeys', adminKey, { metadata: { name }, spec });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return { value: res.body.spec!.key as string, created: Date.parse(res.body.metadata!.creationTimestamp!) };
  };
  const makeTeam = async (name: string, spec: Record<string, unknown>, key = adminKey) => {
    const res = await call('POST', '/teams', key, { metadata: { name }, spec });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body;
  };
  const watch = (path: string, key: string) => openWatch(`${api()}${path}`, key);
  return { api, call, makeKey, makeTeam, watch };
}

const open: Watching[] = [];
const tracked = (w: Watching) => (open.push(w), w);
afterAll(() => open.forEach((w) => w.close()));

/** The server of the two describes with the default flags (their objects' names do not meet): one process, not two. */
let defaults: Served;
beforeAll(async () => {
  defaults = await startServe(['--insecure-http'], { env: { TEAMKEYS_ADMIN_KEY: adminKey } });
});
afterAll(() => defaults?.stop());

describe('a watch follows its key (point 3)', () => {
  const c = client(() => defaults);
  beforeAll(async () => {
    await c.makeTeam('readers', { users: ['rita', 'ross'], clusterRoles: [{ name: 'teams-viewer' }] });
  });

  const endsWith = async (w: Watching, code: number, reason: string, message: string | RegExp) => {
    const error = await w.next((e) => e.type === 'ERROR', 5000);
    expect(error?.object).toMatchObject({ kind: 'Status', code, reason });
    if (typeof message === 'string') expect(error!.object.message).toBe(message);
    else expect(error!.object.message).toMatch(message);
    await w.ended(2000);
    expect(w.endedAt).toBeDefined();
    return error!;
  };

  it('ttl: ends with ERROR 401 "access key expired" within a second of expiry, as a GET is refused', async () => {
    const { value, created } = await c.makeKey('short', { user: 'tess', ttl: 2 });
    const w = tracked(await c.watch('/ownedaccesskeys?watch=true', value));
    expect(w.status).toBe(200);
    const error = await endsWith(w, 401, 'Unauthorized', 'access key expired');
    // The sweep ends it within a second of expiry on a quiet machine; the bound (ten times that)
    // only tells "ended by the expiry" from "left open until its request timeout" (minutes).
    expect(error.at - (created + 2000)).toBeLessThan(10_000);
    expect(await c.call('GET', '/ownedaccesskeys/short', value)).toMatchObject({ status: 401, body: { message: 'access key expired' } });
  });

  it('ttlAfterLastActivity: an open watch is not a use; it ends when the key lapses', async () => {
    const { value } = await c.makeKey('idle', { user: 'ida', ttl: 2, ttlAfterLastActivity: true });
    const w = tracked(await c.watch('/teams?watch=true', value));
    const opened = Date.now();
    const error = await endsWith(w, 401, 'Unauthorized', 'access key expired');
    expect(error.at - opened).toBeLessThan(2000 + 10_000);
  });

  it('disabled: ends with ERROR 401 "access key is disabled" within a second', async () => {
    const { value } = await c.makeKey('dis', { user: 'dana' });
    const w = tracked(await c.watch('/teams?watch=true', value));
    expect(w.status).toBe(200);
    const at = Date.now();
    expect((await c.call('PATCH', '/ownedaccesskeys/dis', adminKey, { spec: { disabled: true } }, merge)).status).toBe(200);
    const error = await endsWith(w, 401, 'Unauthorized', 'access key is disabled');
    expect(error.at - at).toBeLessThan(10_000);
  });

  it('deleted: ends with the 401 a GET with the key gets', async () => {
    const { value } = await c.makeKey('gone', { user: 'gus' });
    const w = tracked(await c.watch('/teams?watch=true', value));
    expect((await c.call('DELETE', '/ownedaccesskeys/gone')).status).toBe(200);
    await endsWith(w, 401, 'Unauthorized', 'Unauthorized');
    expect((await c.call('GET', '/teams', value)).status).toBe(401);
  });

  it('a user removed from the team that let it read ends with 410 Expired, and sees nothing written after', async () => {
    const { value } = await c.makeKey('rita', { user: 'rita' });
    await c.makeTeam('secret', { description: 'before' });
    const w = tracked(await c.watch('/teams?watch=true', value));
    expect(await w.next((e) => e.object.metadata?.name === 'secret')).toBeDefined();
    expect((await c.call('PATCH', '/teams/readers', adminKey, { spec: { users: ['ross'] } }, merge)).status).toBe(200);
    const after = await c.call('PATCH', '/teams/secret', adminKey, { spec: { description: 'after the removal' } }, merge);
    await endsWith(w, 410, 'Expired', /^the permissions of rita on teams changed since this watch began; list again$/);
    expect(w.events.some((e) => e.object.spec?.description === 'after the removal' || Number(e.object.metadata?.resourceVersion) >= Number(after.body.metadata!.resourceVersion))).toBe(false);
    // What a relist shows now: the teams rita may read (none).
    expect((await c.call('GET', '/teams', value)).body.items).toEqual([]);
  });

  it('an approver taken out of a team\'s approvers: its watch of AccessRequests ends with 410 Expired, and a relist shows none of the team\'s', async () => {
    const { value } = await c.makeKey('april', { user: 'april' });
    await c.makeTeam('approved', { owner: { user: 'olga' }, accessRequests: { approvers: ['april'] } });
    const asked = await c.call('POST', '/accessrequests', adminKey, { metadata: { name: 'askes' }, spec: { user: 'ross', team: 'approved', reason: 'INC-1' } });
    expect(asked.status, JSON.stringify(asked.body)).toBe(201);
    const w = tracked(await c.watch('/accessrequests?watch=true', value));
    expect(await w.next((e) => e.object.metadata?.name === 'askes')).toBeDefined();
    expect((await c.call('PATCH', '/teams/approved', adminKey, { spec: { accessRequests: { approvers: ['olga'] } } }, merge)).status).toBe(200);
    await endsWith(w, 410, 'Expired', /^the permissions of april on accessrequests changed since this watch began; list again$/);
    expect((await c.call('GET', '/accessrequests', value)).body.items).toEqual([]);
  });

  it('a user taken out of its team and put back at once sees nothing written while it was out, and its watch ends with 410', async () => {
    // Back-to-back writes (a reconciler applying a change set): the watch's check may come only
    // after the user is back, when its teams look as they did when the watch began.
    for (let round = 0; round < 10; round++) {
      const [team, vault, user] = [`flap-${round}`, `vault-${round}`, `fay-${round}`];
      await c.makeTeam(team, { users: [user] });
      await c.makeTeam(vault, { description: 'public', access: [{ name: 'flap-reads', verbs: ['get'], teams: [team] }] });
      const { value } = await c.makeKey(user, { user });
      const w = tracked(await c.watch(`/teams?watch=true&fieldSelector=metadata.name%3D${vault}`, value));
      expect(await w.next((e) => e.type === 'ADDED')).toBeDefined();
      const writes: Promise<unknown>[] = [];
      const send = async (path: string, spec: unknown) => {
        writes.push(c.call('PATCH', path, adminKey, { spec }, merge));
        await new Promise((r) => setImmediate(r));
      };
      await send(`/teams/${team}`, { users: [] });
      await send(`/teams/${vault}`, { description: 'written while the user was out' });
      await send(`/teams/${team}`, { users: [user] });
      await send(`/teams/${vault}`, { description: 'public again' });
      await Promise.all(writes);
      await w.next((e) => e.type === 'ERROR', 2000);
      expect(JSON.stringify(w.events), `round ${round}`).not.toContain('written while the user was out');
      expect(w.events.at(-1)?.object, `round ${round}`).toMatchObject({ code: 410, reason: 'Expired' });
      w.close();
    }
  });

  it("a key whose scope no longer allows the watch ends with the 403 a new watch would get", async () => {
    const { value } = await c.makeKey('ross', { user: 'ross' });
    const w = tracked(await c.watch('/teams?watch=true', value));
    const scope = { rules: [{ verbs: ['get'], resources: [{ group, resources: ['teams'] }] }] };
    expect((await c.call('PATCH', '/ownedaccesskeys/ross', adminKey, { spec: { scope } }, merge)).status).toBe(200);
    const error = await endsWith(w, 403, 'Forbidden', /cannot watch resource "teams".*scope does not allow/);
    const refused = await c.watch('/teams?watch=true', value);
    expect(refused.status).toBe(403);
    expect((refused.body as { message: string }).message).toBe(error.object.message);
  });
});

describe('what a watch and a past revision show (points 4 and 6)', () => {
  const c = client(() => defaults);
  beforeAll(async () => {
    await c.makeTeam('creators', { users: ['cleo'], clusterRoles: [{ name: 'teams-creator' }] });
  });

  it('an update that takes access away sends DELETED with the previous object; one that grants it, ADDED with the new', async () => {
    const { value } = await c.makeKey('una', { user: 'una' });
    await c.makeTeam('ledger', { description: 'shared', access: [{ name: 'una-reads', verbs: ['get'], users: ['una'] }] });
    const w = tracked(await c.watch('/teams?watch=true', value));
    const first = await w.next((e) => e.object.metadata?.name === 'ledger');
    expect(first?.type).toBe('ADDED');
    const revoked = await c.call('PATCH', '/teams/ledger', adminKey, { spec: { description: 'private now', users: ['vera'], access: null } }, merge);
    const gone = await w.next((e) => e.type === 'DELETED');
    expect(gone?.object.spec).toEqual(first!.object.spec);
    expect(gone?.object.metadata?.resourceVersion).toBe(revoked.body.metadata!.resourceVersion);
    expect(JSON.stringify(w.events)).not.toContain('private now');
    await c.call('PATCH', '/teams/ledger', adminKey, { spec: { description: 'shared again', access: [{ name: 'una-reads', verbs: ['get'], users: ['una'] }] } }, merge);
    const back = await w.next((e) => e.type === 'ADDED' && e !== first);
    expect(back?.object.spec?.description).toBe('shared again');
  });

  it('an object still live but no longer readable is not shown at a revision when it was', async () => {
    const { value } = await c.makeKey('wes', { user: 'wes' });
    await c.makeTeam('archive', { description: 'then', access: [{ name: 'wes-reads', verbs: ['get'], users: ['wes'] }] });
    const then = await c.call('GET', '/teams', value);
    expect(then.body.items!.map((t) => t.metadata!.name)).toEqual(['archive']);
    await c.call('PATCH', '/teams/archive', adminKey, { spec: { access: null } }, merge);
    const exact = await c.call('GET', `/teams?resourceVersion=${then.body.metadata!.resourceVersion}&resourceVersionMatch=Exact`, value);
    expect([exact.status, exact.body.items]).toEqual([200, []]);
  });

  it('a payments re-created by another owner: its old key is not shown at the old revision, by Exact, a crafted continue token, or a watch', async () => {
    await c.makeTeam('payments', { owner: { user: 'olga' }, description: 'the old payments' });
    const { value: olga } = await c.makeKey('olga', { user: 'olga' });
    await c.makeKey('payments-ci', { team: 'payments' });
    const old = (await c.call('GET', '/ownedaccesskeys', olga)).body;
    expect(old.items!.map((k) => k.metadata!.name)).toContain('payments-ci');
    const rv = old.metadata!.resourceVersion!;
    expect((await c.call('DELETE', '/teams/payments')).status).toBe(200);
    await c.call('DELETE', '/ownedaccesskeys/payments-ci');
    const { value: cleo } = await c.makeKey('cleo', { user: 'cleo' });
    await c.makeTeam('payments', { owner: { user: 'cleo' } }, cleo);

    const names = (b: Body) => (b.items ?? []).map((k) => k.metadata!.name);
    const exact = await c.call('GET', `/ownedaccesskeys?resourceVersion=${rv}&resourceVersionMatch=Exact`, cleo);
    expect(exact.status).toBe(200);
    expect(names(exact.body)).not.toContain('payments-ci');
    const teamsThen = await c.call('GET', `/teams?resourceVersion=${rv}&resourceVersionMatch=Exact`, cleo);
    expect(JSON.stringify(teamsThen.body)).not.toContain('the old payments');
    // A reader of every object sees the past as it was.
    expect(names((await c.call('GET', `/ownedaccesskeys?resourceVersion=${rv}&resourceVersionMatch=Exact`)).body)).toContain('payments-ci');

    // A token at that revision is one the server made for a page cleo was shown (she was shown
    // none here: her first page at it is empty, with no token); one made by hand, as an old plain
    // token could be, is refused since stop 64 (tokens are sealed, registry/continue-token.ts).
    const firstPage = await c.call('GET', `/ownedaccesskeys?resourceVersion=${rv}&resourceVersionMatch=Exact&limit=1`, cleo);
    expect(firstPage.status).toBe(200);
    expect(firstPage.body.metadata?.continue).toBeUndefined();
    const crafted = Buffer.from(JSON.stringify({ v: 'teamkeys/v1', rv: Number(rv), start: '/ownedaccesskeys/' })).toString('base64url');
    expect((await c.call('GET', `/ownedaccesskeys?limit=50&continue=${crafted}`, cleo)).status).toBe(400);

    const w = tracked(await c.watch(`/ownedaccesskeys?watch=true&resourceVersion=1`, cleo));
    const mine = await w.next((e) => e.object.metadata?.name === 'cleo');
    expect(mine).toBeDefined();
    expect(w.events.some((e) => e.object.metadata?.name === 'payments-ci')).toBe(false);
    const tw = tracked(await c.watch(`/teams?watch=true&resourceVersion=1`, cleo));
    expect(await tw.next((e) => e.object.metadata?.name === 'payments')).toMatchObject({ type: 'ADDED' });
    expect(JSON.stringify(tw.events)).not.toContain('the old payments');
  });
});

describe('how long a watch lasts (point 3)', () => {
  let served: Served;
  const c = client(() => served);
  beforeAll(async () => {
    served = await startServe(['--insecure-http', '--min-request-timeout', '1'], { env: { TEAMKEYS_ADMIN_KEY: adminKey } });
  });
  afterAll(() => served?.stop());

  it('a watch asking for an hour, or for nothing, ends between --min-request-timeout and twice that', async () => {
    const { value } = await c.makeKey('long', { user: 'lou' });
    for (const query of ['timeoutSeconds=3600', '']) {
      const began = Date.now();
      const w = tracked(await c.watch(`/teams?watch=true&${query}`, value));
      expect(w.status).toBe(200);
      await w.ended(20_000);
      // The lower bound the jitter keeps (a timer never fires early); the upper one is ten times the
      // 2 s a quiet machine can take, so it only catches a watch kept for the hour it asked for.
      expect(w.endedAt! - began).toBeGreaterThanOrEqual(900);
      expect(w.endedAt! - began).toBeLessThan(20_000);
      expect(w.events.filter((e) => e.type === 'ERROR')).toEqual([]);
    }
  });
});

describe('how many watches (point 10)', () => {
  let served: Served;
  const c = client(() => served);
  beforeAll(async () => {
    served = await startServe(['--insecure-http', '--max-watches-per-user', '2', '--max-watches', '4'], { env: { TEAMKEYS_ADMIN_KEY: adminKey } });
  });
  afterAll(() => served?.stop());

  it('watches per user (over all its keys) and in total are bounded: one more is 429 with Retry-After', async () => {
    const one = await c.makeKey('uma-1', { user: 'uma' });
    const two = await c.makeKey('uma-2', { user: 'uma' });
    const other = await c.makeKey('otto', { user: 'otto' });
    const ws = [await c.watch('/teams?watch=true', one.value), await c.watch('/teams?watch=true', one.value)].map(tracked);
    expect(ws.map((w) => w.status)).toEqual([200, 200]);
    const third = tracked(await c.watch('/teams?watch=true', two.value));
    expect([third.status, third.retryAfter]).toEqual([429, '1']);
    expect(third.body).toMatchObject({ code: 429, reason: 'TooManyRequests', message: 'too many watches open for uma (the limit is 2, over all its access keys); close one or retry later' });
    const o = [await c.watch('/teams?watch=true', other.value), await c.watch('/teams?watch=true', adminKey)].map(tracked);
    expect(o.map((w) => w.status)).toEqual([200, 200]);
    const over = tracked(await c.watch('/teams?watch=true', adminKey));
    expect([over.status, over.retryAfter]).toEqual([429, '1']);
    expect(over.body).toMatchObject({ message: 'too many watches open on this server (the limit is 4); retry later', details: { retryAfterSeconds: 1 } });
    // A closed watch gives its place back.
    ws[0]!.close();
    let status = 0;
    for (let waited = 0; waited < 5000 && status !== 200; waited += 100) {
      const again = tracked(await c.watch('/teams?watch=true', two.value));
      status = again.status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe(200);
  });

  it('refuses limits that are not whole numbers above 0', () => {
    for (const flag of ['--max-watches-per-user', '--max-watches', '--min-request-timeout']) {
      const run = teamkeys(['serve', flag, '0', '--store', 'memory:', '--insecure-http']);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`${flag} must be a whole number`);
    }
  });
});

describe('a watch gives its place back (point 10)', () => {
  let served: Served;
  const c = client(() => served);
  beforeAll(async () => {
    served = await startServe(['--insecure-http', '--max-watches-per-key', '2'], { env: { TEAMKEYS_ADMIN_KEY: adminKey } });
  });
  afterAll(() => served?.stop());

  it('a client that resets its connection while the watch starts gives its place back (no slot leak)', async () => {
    const { value } = await c.makeKey('rex', { user: 'rex' });
    // A watch that matches nothing sends no event, so nothing written would notice the dead socket.
    const { pathname, port } = new URL(`${c.api()}/teams?watch=true&fieldSelector=metadata.name%3Dnothing`);
    // The reset must land while the watch starts (a few milliseconds): tried at a few delays.
    for (let i = 0; i < 12; i++) {
      await new Promise<void>((done) => {
        const s = connect(Number(port), '127.0.0.1', () => {
          s.write(`GET ${pathname}?watch=true&fieldSelector=metadata.name%3Dnothing HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${value}\r\n\r\n`);
          // Once the request is on its way, and before any answer.
          setTimeout(() => {
            s.resetAndDestroy();
            done();
          }, i % 4);
        });
        s.on('error', () => {});
      });
    }
    let last = 0;
    for (let waited = 0; waited < 5000 && last !== 200; waited += 200) {
      const w = tracked(await c.watch('/teams?watch=true', value));
      last = w.status;
      w.close();
      if (last !== 200) await new Promise((r) => setTimeout(r, 200));
    }
    expect(last).toBe(200);
  });
});
