/**
 * Found by a review (stop 64), what a restricted reader learned of objects it may not see:
 * - a filtered LIST that pages stops after examining 10,000 objects, and its continue token was
 *   plain base64 JSON naming the last object examined, one the reader may not see; a hand-made
 *   token placed the page anywhere, so every hidden key's name could be spelled out. Tokens are now
 *   sealed (registry/continue-token.ts): they name nothing, have one length, and only the server
 *   makes them;
 * - a rules review (kubectl auth can-i --list) said `incomplete` once the kind held 500 objects,
 *   however few the caller saw; it now looks at the caller's own objects where an index finds them,
 *   and is always incomplete where a role reaches an unindexed part of the kind.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcess } from '../support/in-process.js';

const json = { 'Content-Type': 'application/json' };
const keyOf = (who: string) => `${who[0]!.toUpperCase()}${who.slice(1)}Key${'v'.repeat(50)}`;
const hidden = 12_000;
const table = 'application/json;as=Table;v=v1;g=meta.k8s.io';

describe('what paging and a rules review tell a restricted reader', () => {
  let server: InProcess;
  const url = (p: string) => `${server.api}/${p}`;

  beforeAll(async () => {
    server = await startInProcess();
    const make = async (p: string, body: unknown) => expect((await server.fetch(url(p), { method: 'POST', headers: json, body: JSON.stringify(body) })).status).toBe(201);
    // vic reads every Team (teams-viewer) and no user's key but his own; alice has no role at all.
    await make('teams', { metadata: { name: 'viewers' }, spec: { users: ['vic'], clusterRoles: [{ name: 'teams-viewer' }] } });
    await make('ownedaccesskeys', { metadata: { name: 'zz-vic' }, spec: { user: 'vic', key: keyOf('vic') } });
    await make('ownedaccesskeys', { metadata: { name: 'zz-alice' }, spec: { user: 'alice', key: keyOf('alice') } });
    for (let i = 0; i < hidden; i += 200) {
      const batch = [];
      for (let j = i; j < Math.min(hidden, i + 200); j++) {
        const n = String(j).padStart(5, '0');
        batch.push(server.registry.ownedaccesskeys.create({ apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', metadata: { name: `secret-${n}-of-user${n}` }, spec: { user: `user${n}` } }));
      }
      await Promise.all(batch);
    }
  }, 240_000);
  afterAll(() => server?.close());

  const page = async (who: string, query: string) => {
    const res = await fetch(url(`ownedaccesskeys?${query}`), { headers: { Authorization: `Bearer ${keyOf(who)}`, Accept: table } });
    return { status: res.status, text: await res.text() };
  };

  it("paging through the kind, vic's tokens and pages name no key but his own, and every token has one length", async () => {
    let token: string | undefined;
    const seen: string[] = [];
    const lengths = new Set<number>();
    for (let i = 0; i < 5; i++) {
      const { status, text } = await page('vic', `limit=5${token ? `&continue=${token}` : ''}`);
      expect(status).toBe(200);
      const body = JSON.parse(text) as { metadata: { continue?: string }; rows: { cells: unknown[] }[] };
      seen.push(...body.rows.map((r) => String(r.cells[0])));
      expect(text).not.toMatch(/secret-\d{5}/);
      token = body.metadata.continue;
      if (!token) break;
      expect(Buffer.from(token, 'base64url').toString()).not.toMatch(/secret|ownedaccesskeys/);
      lengths.add(token.length);
    }
    // Two bounded pages of nothing, then his own key (names sort after the hidden ones).
    expect(seen).toEqual(['zz-vic']);
    expect(lengths.size).toBe(1);
  }, 60_000);

  it('a filtered page served as JSON from the watch cache examines at most 10,000 objects, as the store path does (found by a review, stop 65)', async () => {
    // Each first page stops after 10,000 of the hidden keys with nothing in it and a token; the
    // pages after it reach the match (and a full page of a filtered list always has a token, as
    // list.ts's: the last page is empty). Before, one limit=1 request walked the whole kind.
    const pages = async (who: string | undefined, query: string) => {
      const shown: string[][] = [];
      let token: string | undefined;
      do {
        const path = url(`ownedaccesskeys?${query}${token ? `&continue=${token}` : ''}`);
        const res = who ? await fetch(path, { headers: { Authorization: `Bearer ${keyOf(who)}` } }) : await server.fetch(path);
        expect(res.status).toBe(200);
        const body = (await res.json()) as { metadata: { continue?: string }; items: { metadata: { name: string } }[] };
        shown.push(body.items.map((k) => k.metadata.name));
        token = body.metadata.continue;
      } while (token && shown.length < 10);
      return shown;
    };
    expect(await pages('vic', 'limit=1')).toEqual([[], ['zz-vic'], []]);
    // A selector that matches one key, asked by the administrator: the same bound.
    await server.registry.ownedaccesskeys.create({ apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', metadata: { name: 'zz-labelled', labels: { tier: 'gold' } }, spec: { user: 'lab' } });
    expect(await pages(undefined, 'limit=1&labelSelector=tier%3Dgold')).toEqual([[], ['zz-labelled'], []]);
    // A label selector's value list is a set: a long one costs a lookup per object, not a walk.
    const many = Array.from({ length: 1500 }, (_, i) => `v${i}`).join(',');
    expect(await pages(undefined, `limit=1&labelSelector=${encodeURIComponent(`tier in (${many},gold)`)}`)).toEqual([[], ['zz-labelled'], []]);
  }, 60_000);

  it('a hand-made token (plain, as tokens were) is refused, so the page cannot be placed', async () => {
    const crafted = Buffer.from(JSON.stringify({ v: 'teamkeys/v1', rv: -1, start: '/ownedaccesskeys/secret-01500' })).toString('base64url');
    const refused = await page('vic', `limit=5&continue=${crafted}`);
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('continue key is not valid');
    expect(refused.text).not.toMatch(/secret-\d{5}/);
  });

  it('a rules review is incomplete by what the caller may see, not by what the kind holds', async () => {
    const review = async (who: string) => {
      const base = server.api.replace(/\/apis\/management\.service\/v1$/, '');
      const res = await fetch(`${base}/apis/authorization.k8s.io/v1/selfsubjectrulesreviews`, { method: 'POST', headers: { ...json, Authorization: `Bearer ${keyOf(who)}` }, body: JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace: '' } }) });
      expect(res.status).toBe(201);
      return ((await res.json()) as { status: { incomplete: boolean; resourceRules: { resources: string[]; resourceNames?: string[] }[] } }).status;
    };
    const alice = await review('alice');
    expect(alice.incomplete).toBe(false);
    expect(alice.resourceRules.filter((r) => r.resources.includes('ownedaccesskeys') && r.resourceNames).flatMap((r) => r.resourceNames)).toEqual(['zz-alice']);
    // A role reaching an unindexed part of the kind: always incomplete, whatever the kind holds.
    expect((await review('vic')).incomplete).toBe(true);
  });
});
