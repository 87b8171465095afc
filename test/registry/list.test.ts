import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../../src/store/backends/memory.js';
import type { Store } from '../../src/store/types.js';
import { newRegistry, statusOf, team } from './helpers.js';
import { encodeContinue } from '../../src/registry/continue-token.js';
import { FieldCipher } from '../../src/api/field-cipher.js';

async function seeded() {
  const fx = newRegistry();
  const labels: Record<string, Record<string, string>> = {
    alpha: { env: 'prod', tier: 'gold' },
    bravo: { env: 'dev' },
    charlie: { env: 'prod' },
    delta: { env: 'staging', tier: 'silver' },
    echo: {},
  };
  for (const [name, l] of Object.entries(labels)) await fx.registry.teams.create(team(name, {}, { labels: l }));
  return fx;
}

const names = (items: { metadata: { name?: string } }[]) => items.map((i) => i.metadata.name);

describe('list', () => {
  it('answers a TeamList in name order with the revision it was read at', async () => {
    const { registry, store } = await seeded();
    const list = await registry.teams.list();
    expect(list.kind).toBe('TeamList');
    expect(list.apiVersion).toBe('management.service/v1');
    expect(list.metadata.resourceVersion).toBe(String(await store.currentRevision()));
    expect(names(list.items)).toEqual(['alpha', 'bravo', 'charlie', 'delta', 'echo']);
    expect(list.metadata.continue).toBeUndefined();
  });

  it.each([
    ['env=prod', ['alpha', 'charlie']],
    ['env==prod', ['alpha', 'charlie']],
    ['env!=prod', ['bravo', 'delta', 'echo']],
    ['env in (dev,staging)', ['bravo', 'delta']],
    ['env notin (dev,staging)', ['alpha', 'charlie', 'echo']],
    ['tier', ['alpha', 'delta']],
    ['!tier', ['bravo', 'charlie', 'echo']],
    ['env=prod,tier=gold', ['alpha']],
    ['env in (prod), !tier', ['charlie']],
  ])('labelSelector %s', async (selector, expected) => {
    const { registry } = await seeded();
    expect(names((await registry.teams.list({ labelSelector: selector })).items)).toEqual(expected);
  });

  it.each([
    ['metadata.name=charlie', ['charlie']],
    ['metadata.name==charlie', ['charlie']],
    ['metadata.name!=charlie', ['alpha', 'bravo', 'delta', 'echo']],
    ['metadata.name=nobody', []],
    ['metadata.namespace=', ['alpha', 'bravo', 'charlie', 'delta', 'echo']],
  ])('fieldSelector %s', async (selector, expected) => {
    const { registry } = await seeded();
    expect(names((await registry.teams.list({ fieldSelector: selector })).items)).toEqual(expected);
  });

  it('a field selector that pins a name is one keyed read, not a scan, and still honours the label selector', async () => {
    let scans = 0;
    const store = new Proxy(new MemoryStore(), {
      get(target, prop, receiver) {
        if (prop === 'list') scans++;
        const value = Reflect.get(target, prop, receiver) as unknown;
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }) as Store;
    const { registry } = newRegistry({ store });
    for (const n of ['a', 'b', 'c']) await registry.teams.create(team(n, {}, { labels: { env: n === 'b' ? 'prod' : 'dev' } }));
    scans = 0;
    const hit = await registry.teams.list({ fieldSelector: 'metadata.name=b', labelSelector: 'env=prod' });
    const miss = await registry.teams.list({ fieldSelector: 'metadata.name=b', labelSelector: 'env=dev' });
    const none = await registry.teams.list({ fieldSelector: 'metadata.name=zzz' });
    expect(scans).toBe(0);
    expect(names(hit.items)).toEqual(['b']);
    expect(Number(hit.metadata.resourceVersion)).toBeGreaterThanOrEqual(Number(hit.items[0]!.metadata.resourceVersion));
    expect(miss.items).toEqual([]);
    expect(none.items).toEqual([]);
  });

  it.each([
    ['labelSelector', 'env in (prod', 'unable to parse requirement'],
    ['labelSelector', 'env=prod=x', 'unable to parse requirement'],
    ['labelSelector', 'bad key=1', 'unable to parse requirement'],
    ['labelSelector', 'env=not a value', 'unable to parse requirement'],
    ['fieldSelector', 'spec.users=x', '"spec.users" is not a known field selector: only "metadata.name", "metadata.namespace", "keyHash", "needsReview"'],
    ['fieldSelector', 'metadata.name', 'invalid field selector'],
  ])('a bad %s %j is 400', async (param, selector, message) => {
    const { registry } = await seeded();
    const s = await statusOf(registry.teams.list({ [param]: selector }));
    expect(s).toMatchObject({ code: 400, reason: 'BadRequest' });
    expect(s.message).toContain(message);
  });

  it('pages with limit and continue at the revision of the first page', async () => {
    const { registry } = await seeded();
    const first = await registry.teams.list({ limit: 2 });
    expect(names(first.items)).toEqual(['alpha', 'bravo']);
    expect(first.metadata.continue).toBeDefined();
    await registry.teams.delete('charlie');
    await registry.teams.create(team('bravo2'));
    const second = await registry.teams.list({ limit: 2, continue: first.metadata.continue! });
    expect(names(second.items)).toEqual(['charlie', 'delta']);
    expect(second.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
    const third = await registry.teams.list({ limit: 2, continue: second.metadata.continue! });
    expect(names(third.items)).toEqual(['echo']);
    expect(third.metadata.continue).toBeUndefined();
  });

  it('pages with a label selector fill each page with matches', async () => {
    const { registry } = await seeded();
    const first = await registry.teams.list({ limit: 1, labelSelector: 'env=prod' });
    expect(names(first.items)).toEqual(['alpha']);
    const second = await registry.teams.list({ limit: 1, labelSelector: 'env=prod', continue: first.metadata.continue! });
    expect(names(second.items)).toEqual(['charlie']);
  });

  it.each([
    ['garbage', '!!!', 'continue key is not valid: not a base64 token'],
    ['valid base64 of junk', Buffer.from('{"hello":1}').toString('base64url'), 'continue key is not valid: not a token this server issued'],
    // Until stop 64 a token was plain JSON: a hand-made one placed a restricted reader's page anywhere.
    ['a plain token, as an earlier version issued and anyone can make', Buffer.from(JSON.stringify({ v: 'teamkeys/v1', rv: 1, start: '/teams/bravo' })).toString('base64url'), 'a token of an earlier version of this server: start the list again'],
  ])('a bad continue token (%s) is 400', async (_label, token, message) => {
    const { registry } = await seeded();
    const s = await statusOf(registry.teams.list({ continue: token }));
    expect(s).toMatchObject({ code: 400, reason: 'BadRequest' });
    expect(s.message).toContain(message);
  });

  it('a token is sealed: it names no key, only this server makes one, and it is bound to its resource and revision', async () => {
    const { registry } = await seeded();
    const first = await registry.teams.list({ limit: 1 });
    const token = first.metadata.continue!;
    const decoded = Buffer.from(token, 'base64url').toString();
    expect(decoded).not.toContain('alpha');
    // The same page asked again gives the same token (the bodies kept by revision compare bytes).
    expect((await registry.teams.list({ limit: 1 })).metadata.continue).toBe(token);
    // Tokens of pages ending at keys of other lengths are as long: the length names nothing either.
    const third = await registry.teams.list({ limit: 1, continue: (await registry.teams.list({ limit: 1, continue: token })).metadata.continue! });
    expect(third.metadata.continue!.length).toBe(token.length);
    const refused = async (t: string, message: string) => {
      const s = await statusOf(registry.teams.list({ continue: t }));
      expect(s).toMatchObject({ code: 400, reason: 'BadRequest' });
      expect(s.message).toContain(message);
    };
    await refused(encodeContinue(registry.teams.ctx.cipher, 1, '/ownedaccesskeys/x'), 'the token belongs to another resource');
    await refused(encodeContinue(FieldCipher.ephemeral(), 1, '/teams/bravo'), 'not a token this server issued');
    const parsed = JSON.parse(decoded) as { rv: number };
    await refused(Buffer.from(JSON.stringify({ ...parsed, rv: parsed.rv - 1 })).toString('base64url'), 'not a token this server issued');
  });

  it('a continue token older than the retained history is 410 Expired', async () => {
    const { registry, store } = await seeded();
    const first = await registry.teams.list({ limit: 2 });
    await registry.teams.patch('alpha', 'merge', { spec: { description: 'x' } });
    await store.compact(await store.currentRevision());
    const s = await statusOf(registry.teams.list({ limit: 2, continue: first.metadata.continue! }));
    expect(s).toMatchObject({ code: 410, reason: 'Expired' });
    expect(s.message).toContain('The provided continue parameter is too old');
  });

  it('resourceVersion: an exact old revision lists the old state; a future one is 504; garbage is 400', async () => {
    const { registry, store } = await seeded();
    const before = await store.currentRevision();
    await registry.teams.delete('alpha');
    const exact = await registry.teams.list({ resourceVersion: String(before), resourceVersionMatch: 'Exact' });
    expect(names(exact.items)).toContain('alpha');
    const notOlder = await registry.teams.list({ resourceVersion: String(before) });
    expect(names(notOlder.items)).not.toContain('alpha');
    const future = await statusOf(registry.teams.list({ resourceVersion: String(before + 100) }));
    expect(future).toMatchObject({ code: 504, reason: 'Timeout', details: { retryAfterSeconds: 1 } });
    expect(future.message).toContain('Too large resource version');
    expect((await statusOf(registry.teams.list({ resourceVersion: 'abc' }))).code).toBe(400);
    expect((await statusOf(registry.teams.list({ limit: -1 }))).code).toBe(400);
  });
});
