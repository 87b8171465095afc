import { describe, expect, it } from 'vitest';
import { generateKey } from '../../src/api/key-format.js';
import { hashKey } from '../../src/api/secrets.js';
import type { KubeObject } from '../../src/api/types.js';
import { present } from '../../src/registry/context.js';
import { accessKey, newRegistry, spec, statusOf } from './helpers.js';

const connectorData = 'upstream-refresh-token-SECRET';
const oidc = { idToken: 'ID-TOKEN-SECRET', accessToken: 'ACCESS-TOKEN-SECRET', refreshToken: 'REFRESH-TOKEN-SECRET' };

function storedHash(obj: unknown): string | undefined {
  return (obj as { sealed?: { keyHash?: string } }).sealed?.keyHash;
}

describe('access key secrets', () => {
  it('a key value shown once is added to a copy of the spec, never to the stored object others may hold', () => {
    const stored = { apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', metadata: { name: 'k' }, spec: { user: 'ana' }, sealed: { keyHash: 'sha256:x' } };
    const shown = present(stored, 'tk_shown-once');
    expect(spec(shown).key).toBe('tk_shown-once');
    expect(shown).not.toHaveProperty('sealed');
    expect(stored.spec).toEqual({ user: 'ana' });
  });

  it('generates a key in the tk_ format when none is given and shows it once, in the create response', async () => {
    const { registry, store } = newRegistry();
    const { object } = await registry.ownedaccesskeys.create(accessKey('ci', { user: 'ana' }));
    const key = spec(object).key as string;
    expect(key).toMatch(/^tk_[0-9A-Za-z]{49}$/);
    expect(spec(await registry.ownedaccesskeys.get('ci')).key).toBeUndefined();
    expect(spec((await registry.ownedaccesskeys.list()).items[0]!).key).toBeUndefined();
    // Stored only as a hash.
    const raw = await store.get('/ownedaccesskeys/ci');
    expect(JSON.stringify(raw)).not.toContain(key);
    expect(storedHash(raw)).toBe(hashKey(key));
  });

  it('accepts a supplied key of 32+ characters and refuses a shorter one', async () => {
    const { registry } = newRegistry();
    const supplied = 'A'.repeat(16) + 'b'.repeat(16);
    const { object } = await registry.ownedaccesskeys.create(accessKey('mine', { user: 'ana', key: supplied }));
    expect(spec(object).key).toBe(supplied);
    const s = await statusOf(registry.ownedaccesskeys.create(accessKey('short', { user: 'ana', key: 'tooShort123' })));
    expect(s.details?.causes?.[0]?.field).toBe('spec.key');
    expect(JSON.stringify(s)).not.toContain('tooShort123');
  });

  it('accepts a supplied tk_ value whose checksum matches and refuses one whose checksum does not, without echoing it', async () => {
    const { registry } = newRegistry();
    const good = generateKey();
    expect(spec((await registry.ownedaccesskeys.create(accessKey('formatted', { user: 'ana', key: good }))).object).key).toBe(good);
    const bad = `${good.slice(0, -1)}${good.endsWith('0') ? '1' : '0'}`;
    const s = await statusOf(registry.ownedaccesskeys.create(accessKey('mistyped', { user: 'ana', key: bad })));
    expect(s.code).toBe(422);
    expect(s.details?.causes?.[0]).toMatchObject({ field: 'spec.key', message: expect.stringContaining('valid checksum') });
    expect(JSON.stringify(s)).not.toContain(bad);
  });

  it('a PUT or patch without spec.key keeps the key; one that sets it rotates it and shows the new value once', async () => {
    const { registry, store } = newRegistry();
    const { object } = await registry.ownedaccesskeys.create(accessKey('ci', { user: 'ana' }));
    const original = spec(object).key as string;
    const read = await registry.ownedaccesskeys.get('ci');
    const put = await registry.ownedaccesskeys.update('ci', { ...read, spec: { ...spec(read), displayName: 'CI' } });
    expect(spec(put.object).key).toBeUndefined();
    expect(storedHash(await store.get('/ownedaccesskeys/ci'))).toBe(hashKey(original));
    await registry.ownedaccesskeys.patch('ci', 'merge', { spec: { disabled: true } });
    expect(storedHash(await store.get('/ownedaccesskeys/ci'))).toBe(hashKey(original));

    const rotated = 'R'.repeat(40);
    const patched = await registry.ownedaccesskeys.patch('ci', 'merge', { spec: { key: rotated } });
    expect(spec(patched.object).key).toBe(rotated);
    expect(patched.object.metadata.generation).toBe(4); // create, displayName, disabled, rotation
    expect(storedHash(await store.get('/ownedaccesskeys/ci'))).toBe(hashKey(rotated));
    expect(spec(await registry.ownedaccesskeys.get('ci')).key).toBeUndefined();
  });

  it('stores connectorData and oidcLogin tokens but never returns them; a read-modify-write keeps them', async () => {
    const { registry, store } = newRegistry();
    const { object } = await registry.ownedaccesskeys.create(
      accessKey('sso', {
        user: 'ana',
        identity: { username: 'ana', connector: 'github', connectorData },
        oidcLogin: { ...oidc, lastRefresh: '2026-01-01T00:00:00Z' },
      }),
    );
    const shown = JSON.stringify(object);
    for (const secret of [connectorData, ...Object.values(oidc)]) expect(shown).not.toContain(secret);
    expect(spec(object).identity).toEqual({ username: 'ana', connector: 'github' });
    expect(spec(object).oidcLogin).toEqual({ lastRefresh: '2026-01-01T00:00:00Z' });

    const read = await registry.ownedaccesskeys.get('sso');
    await registry.ownedaccesskeys.update('sso', { ...read, spec: { ...spec(read), description: 'edited' } });
    const raw = (await store.get('/ownedaccesskeys/sso')) as KubeObject & { sealed?: { fields?: Record<string, string> } };
    // Stored encrypted, bound to the object and field: they open to the values written.
    const cipher = registry.ownedaccesskeys.ctx.cipher;
    const opened = (f: string) => cipher.open(raw.sealed!.fields![f]!, `${raw.metadata.uid}/${f}`);
    expect(JSON.stringify(raw)).not.toContain(connectorData);
    expect(Object.keys(raw.sealed?.fields ?? {}).sort()).toEqual(['spec.identity.connectorData', 'spec.oidcLogin.accessToken', 'spec.oidcLogin.idToken', 'spec.oidcLogin.refreshToken']);
    expect(opened('spec.identity.connectorData')).toBe(connectorData);
    expect(opened('spec.oidcLogin.idToken')).toBe(oidc.idToken);
    expect(opened('spec.oidcLogin.accessToken')).toBe(oidc.accessToken);
    expect(opened('spec.oidcLogin.refreshToken')).toBe(oidc.refreshToken);
    expect(() => cipher.open(raw.sealed!.fields!['spec.oidcLogin.idToken']!, `${raw.metadata.uid}/spec.identity.connectorData`)).toThrow();

    // Removing the object that holds a secret removes the secret with it.
    const latest = await registry.ownedaccesskeys.get('sso');
    const { identity: _identity, ...rest } = spec(latest);
    await registry.ownedaccesskeys.update('sso', { ...latest, spec: rest } as KubeObject);
    const after = (await store.get('/ownedaccesskeys/sso')) as { sealed?: { fields?: Record<string, string> } };
    expect(after.sealed?.fields?.['spec.identity.connectorData']).toBeUndefined();
    expect(after.sealed?.fields?.['spec.oidcLogin.idToken']).toBe(raw.sealed?.fields?.['spec.oidcLogin.idToken']);
  });

  it('watch events never carry secrets', async () => {
    const { registry } = newRegistry();
    const w = registry.ownedaccesskeys.watch();
    const { object } = await registry.ownedaccesskeys.create(accessKey('k', { user: 'ana', identity: { connectorData } }));
    const key = spec(object).key as string;
    const seen: string[] = [];
    for await (const e of w) {
      seen.push(JSON.stringify(e));
      break;
    }
    w.stop();
    expect(seen).toHaveLength(1);
    expect(seen[0]).not.toContain(key);
    expect(seen[0]).not.toContain(connectorData);
    expect(seen[0]).not.toContain('sealed');
  });
});
