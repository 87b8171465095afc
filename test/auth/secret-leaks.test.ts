import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readEvents } from '../server/in-process.js';
import { startServe } from '../server/serve-process.js';

const connectorData = 'CONNECTOR-upstream-token-0123456789';
const oidc = { idToken: 'IDTOKEN-eyJhbGciOiJSUzI1NiJ9', accessToken: 'ACCESSTOKEN-ya29.a0Af', refreshToken: 'REFRESHTOKEN-1//0gLx' };
const suppliedKey = 'Supplied' + 'q'.repeat(40);
const badShortKey = 'shortSECRETvalue12';

describe('secrets never leak', () => {
  it('no response after the creating one, and no log line, carries a key, connectorData or an OIDC token', async () => {
    const served = await startServe(['--insecure-http', '--log-level', 'trace']);
    const api = `${served.url}/apis/management.service/v1`;
    const scanned: string[] = [];
    let keyA = '';
    let rotatedKey = '';
    const call = async (path: string, init: RequestInit & { token?: string } = {}, scan = true) => {
      const res = await fetch(`${api}${path}`, {
        ...init,
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${init.token ?? served.adminKey}`, ...(init.headers as Record<string, string>) },
      });
      const text = await res.text();
      if (scan) scanned.push(`${res.status} ${JSON.stringify([...res.headers])} ${text}`);
      return { status: res.status, text };
    };
    try {
      // The creating responses show the key once; they are the only ones left out of the scan.
      const createdA = await call(
        '/ownedaccesskeys',
        { method: 'POST', body: JSON.stringify({ metadata: { name: 'sso' }, spec: { user: 'ana', identity: { username: 'ana', connectorData }, oidcLogin: oidc } }) },
        false,
      );
      keyA = (JSON.parse(createdA.text) as { spec: { key: string } }).spec.key;
      expect(keyA).toMatch(/^tk_[0-9A-Za-z]{49}$/);
      expect(createdA.text).not.toContain(connectorData);
      const createdB = await call('/ownedaccesskeys', { method: 'POST', body: JSON.stringify({ metadata: { name: 'ci' }, spec: { user: 'bo', key: suppliedKey } }) }, false);
      expect(createdB.status).toBe(201);
      // A rotation with an overlap: its response shows the new value once (left out of the scan);
      // nothing else shows either value, nor the hash of either (the previous one is kept sealed).
      const rotatedB = await call('/ownedaccesskeys/ci/rotation', { method: 'POST', body: JSON.stringify({ kind: 'KeyRotation', spec: { overlapSeconds: 3600 } }) }, false);
      expect(rotatedB.status).toBe(201);
      rotatedKey = (JSON.parse(rotatedB.text) as { spec: { key: string } }).spec.key;
      expect((await call('/teams', { token: rotatedKey })).status).toBe(200);
      expect((await call('/ownedaccesskeys/ci/rotation', { method: 'POST', body: JSON.stringify({ spec: { key: badShortKey } }) })).status).toBe(422);
      expect((await call('/ownedaccesskeys/ci/rotation', { method: 'POST', body: JSON.stringify({ spec: { key: suppliedKey } }) })).status).toBe(422);
      expect((await call('/ownedaccesskeys/ci/status')).status).toBe(200);

      // Use, read, list, watch, modify.
      expect((await call('/ownedaccesskeys/sso', { token: keyA })).status).toBe(200);
      expect((await call('/ownedaccesskeys', { token: keyA })).status).toBe(200);
      expect((await call('/ownedaccesskeys')).status).toBe(200);
      expect((await call('/teams/ana/accesskeys')).status).toBe(404);
      const watch = await fetch(`${api}/ownedaccesskeys?watch=true`, { headers: { Authorization: `Bearer ${served.adminKey}` } });
      const patched = await call('/ownedaccesskeys/sso', {
        method: 'PATCH',
        headers: { 'Content-Type': 'application/merge-patch+json' },
        body: JSON.stringify({ spec: { description: 'patched' } }),
      });
      expect(patched.status).toBe(200);
      scanned.push(JSON.stringify(await readEvents(watch, 4, 2000)));
      const current = JSON.parse((await call('/ownedaccesskeys/sso')).text) as Record<string, unknown>;
      expect((await call('/ownedaccesskeys/sso', { method: 'PUT', body: JSON.stringify(current) })).status).toBe(200);

      // Failures of every kind, with the secrets in the request.
      expect((await call('/ownedaccesskeys', { method: 'POST', body: JSON.stringify({ metadata: { name: 'bad' }, spec: { user: 'x', key: badShortKey } }) })).status).toBe(422);
      expect((await call('/ownedaccesskeys', { method: 'POST', body: JSON.stringify({ metadata: { name: 'dup' }, spec: { user: 'x', key: suppliedKey } }) })).status).toBe(422);
      expect(
        (await call('/ownedaccesskeys/sso', { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ spec: { ttl: -1, identity: { connectorData: connectorData } } }) })).status,
      ).toBe(422);
      expect((await call('/teams', { token: suppliedKey })).status).toBe(200);
      expect((await call('/ownedaccesskeys/sso', { token: suppliedKey })).status).toBe(403);
      expect((await call('/teams', { token: `${keyA}x` })).status).toBe(401);
      expect((await call('/teams', { token: badShortKey })).status).toBe(401);
      await call('/ownedaccesskeys/sso', { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ spec: { disabled: true } }) });
      expect((await call('/teams', { token: keyA })).status).toBe(401);
    } finally {
      expect(await served.stop()).toBe(0);
    }
    const logs = served.stderr();
    expect(logs.split('\n').filter(Boolean).length).toBeGreaterThan(3);
    expect(scanned.length).toBeGreaterThan(15);
    const secrets = [keyA, connectorData, ...Object.values(oidc), suppliedKey, rotatedKey, badShortKey, served.adminKey, 'sha256:', 'previousKeyHash', '"sealed"'];
    expect(keyA).toMatch(/^tk_[0-9A-Za-z]{49}$/);
    // A failure names the secret by number and the text by place, so it leaks nothing itself.
    const texts = [...scanned, logs, served.stdout()];
    secrets.forEach((secret, i) => texts.forEach((text, j) => expect(text.includes(secret), `secret #${i} found in text #${j} of ${texts.length}`).toBe(false)));
  });

  it('the bootstrap key goes to a 0600 file and is printed nowhere', async () => {
    const served = await startServe();
    try {
      const keyFile = join(served.dir, 'admin.key');
      expect(statSync(keyFile).mode & 0o777).toBe(0o600);
      expect(statSync(join(served.dir, 'kubeconfig')).mode & 0o777).toBe(0o600);
      expect(served.adminKey).toMatch(/^tk_[0-9A-Za-z]{49}$/);
      expect(served.stdout()).toContain(`created the administrator key (user admin) in ${keyFile}, mode 0600`);
    } finally {
      await served.stop();
    }
    expect(served.stdout()).not.toContain(served.adminKey);
    expect(served.stderr()).not.toContain(served.adminKey);
  });
});
