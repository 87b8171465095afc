/**
 * Secrets at rest, on a real `teamkeys serve` over SQLite: the database files' bytes hold no
 * connectorData or OIDC token (not even a replaced one), every file is 0600, the embedded CLI reads
 * and writes the same store with the same key file, and two keys can never share a value.
 */
import { mkdtempSync, readFileSync, statSync, existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StoredApiObject } from '../../src/api/secrets.js';
import { loadCipher } from '../../src/cli/encryption-key-file.js';
import { SqliteStore } from '../../src/store/backends/sqlite.js';
import { teamkeys } from '../support/cli.js';
import { startServe, type Served } from '../server/serve-process.js';

const secrets = {
  connectorData: 'CONNECTOR-DATA-first-0123456789',
  replaced: 'CONNECTOR-DATA-second-0123456789',
  idToken: 'OIDC-ID-TOKEN-0123456789',
  accessToken: 'OIDC-ACCESS-TOKEN-0123456789',
  refreshToken: 'OIDC-REFRESH-TOKEN-0123456789',
  cli: 'CONNECTOR-DATA-from-the-cli-0123456789',
};

describe('sealed at rest', () => {
  let served: Served;
  let db: string;
  let api: string;
  const send = (method: string, path: string, body?: unknown, type = 'application/json') =>
    fetch(`${api}${path}`, { method, headers: { Authorization: `Bearer ${served.adminKey}`, 'Content-Type': type }, ...(body ? { body: JSON.stringify(body) } : {}) });

  beforeAll(async () => {
    db = join(mkdtempSync(join(tmpdir(), 'teamkeys-sealed-')), 'teamkeys.db');
    served = await startServe(['--insecure-http', '--store', `sqlite:${db}`]);
    api = `${served.url}/apis/management.service/v1`;
  });
  afterAll(() => served?.stop());

  it('no sealed value is in the database files, which are 0600 like the key file', async () => {
    const created = await send('POST', '/ownedaccesskeys', {
      metadata: { name: 'sso' },
      spec: {
        user: 'ana',
        identity: { username: 'ana', connector: 'github', connectorData: secrets.connectorData },
        oidcLogin: { idToken: secrets.idToken, accessToken: secrets.accessToken, refreshToken: secrets.refreshToken },
      },
    });
    expect(created.status).toBe(201);
    // Replaced: the first value must not linger in the superseded revision either.
    const replaced = await send('PATCH', '/ownedaccesskeys/sso', { spec: { identity: { connectorData: secrets.replaced } } }, 'application/merge-patch+json');
    expect(replaced.status).toBe(200);
    expect(JSON.stringify(await replaced.json())).not.toContain('CONNECTOR-DATA');

    // The embedded CLI works on the same store with the same key file, and seals what it writes.
    const keyFile = served.encryptionKeyFile;
    const manifest = join(served.dir, 'cli-key.yaml');
    writeFileSync(manifest, `apiVersion: management.service/v1\nkind: OwnedAccessKey\nmetadata: {name: from-cli}\nspec: {user: bob, identity: {connectorData: ${secrets.cli}}}\n`);
    const cli = ['--store', `sqlite:${db}`, '--encryption-key-file', keyFile];
    expect(teamkeys(['create', '-f', manifest, ...cli]).code).toBe(0);
    const listed = teamkeys(['get', 'oak', ...cli]);
    expect(listed.stdout).toMatch(/^sso\s/m);
    expect(listed.stdout).not.toContain('CONNECTOR-DATA');

    for (const file of [db, `${db}-wal`, `${db}-shm`]) {
      if (!existsSync(file)) continue;
      expect(statSync(file).mode & 0o777, file).toBe(0o600);
      const bytes = readFileSync(file);
      for (const [name, secret] of Object.entries(secrets)) expect(bytes.includes(Buffer.from(secret)), `${name} in ${file}`).toBe(false);
    }
    expect(existsSync(`${db}-wal`)).toBe(true);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);

    // What is stored opens with the key file's key, bound to its object and field.
    const store = new SqliteStore(db);
    try {
      const stored = await store.get<StoredApiObject>('/ownedaccesskeys/sso');
      const cipher = await loadCipher(keyFile);
      expect(cipher.open(stored.sealed!.fields!['spec.identity.connectorData']!, `${stored.metadata.uid}/spec.identity.connectorData`)).toBe(secrets.replaced);
    } finally {
      await store.close();
    }
  });

  it('a key value is unique even under concurrent creates: exactly one wins, the others get 422', async () => {
    const value = `Duplicate${'d'.repeat(40)}`;
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => send('POST', '/ownedaccesskeys', { metadata: { name: `dup-${i}` }, spec: { user: 'ana', key: value } })),
    );
    const codes = results.map((r) => r.status).sort();
    expect(codes).toEqual([201, 422, 422, 422, 422, 422]);
    const refused = (await results.find((r) => r.status === 422)!.json()) as { details: { causes: { field: string; message: string }[] } };
    expect(refused.details.causes[0]).toMatchObject({ field: 'spec.key', message: 'Invalid value: this key value is already in use; choose another' });
  });
});
