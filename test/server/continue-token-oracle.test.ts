/**
 * A reader who sees only some objects cannot tell from a continue token whether objects it may not
 * see sort after its own: the token is given whenever its page is full, on the current list (the
 * watch cache) and on a list of the past (the store) alike. Before, it was given only when any
 * object followed, and a review spelled a hidden key's name out letter by letter that way.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcess } from '../support/in-process.js';

const json = { 'Content-Type': 'application/json' };
const keyOf = (who: string) => `${who[0]!.toUpperCase()}${who.slice(1)}Key${'k'.repeat(40)}`;
type List = { metadata: { continue?: string; resourceVersion: string }; items: { metadata: { name: string } }[] };

describe("continue tokens for a reader who sees only its own keys", () => {
  let server: InProcess;
  const make = async (name: string, user: string, key?: string) =>
    expect((await server.fetch(`${server.api}/ownedaccesskeys`, { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name }, spec: { user, ...(key ? { key } : {}) } }) })).status).toBe(201);
  const list = async (query: string): Promise<List> => {
    const res = await server.fetch(`${server.api}/ownedaccesskeys?${query}`, { headers: { Authorization: `Bearer ${keyOf('alice')}` } });
    expect(res.status).toBe(200);
    return (await res.json()) as List;
  };
  /** What alice's one-item page says: her key, and whether a token came with it. */
  const page = async (query: string) => {
    const l = await list(query);
    return { names: l.items.map((i) => i.metadata.name), token: l.metadata.continue !== undefined, rv: l.metadata.resourceVersion };
  };

  beforeAll(async () => {
    server = await startInProcess({});
    await make('alice-key', 'alice', keyOf('alice'));
  });
  afterAll(() => server.close());

  it('gives the same answer whether a hidden key sorts after hers or not, now and in the past', async () => {
    // Nothing of anyone else's after alice-key (the administrator's key, "admin", sorts before it).
    const alone = await page('limit=1');
    await make('zed-secret-name', 'zed');
    const followed = await page('limit=1');
    expect(followed).toMatchObject({ names: ['alice-key'], token: true });
    expect(alone).toMatchObject({ names: ['alice-key'], token: true });
    const past = await page(`limit=1&resourceVersion=${followed.rv}&resourceVersionMatch=Exact`);
    const pastAlone = await page(`limit=1&resourceVersion=${alone.rv}&resourceVersionMatch=Exact`);
    expect(past).toMatchObject({ names: ['alice-key'], token: true });
    expect(pastAlone).toMatchObject({ names: ['alice-key'], token: true });
    // Following the token: an empty last page, however many hidden keys there are.
    const next = await list(`limit=1&continue=${encodeURIComponent((await list('limit=1')).metadata.continue!)}`);
    expect(next.items).toEqual([]);
    expect(next.metadata.continue).toBeUndefined();
  });
});
