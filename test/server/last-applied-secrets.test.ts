/**
 * kubectl's last-applied record (`kubectl.kubernetes.io/last-applied-configuration`) never keeps an
 * access key's value: `kubectl apply` writes the manifest it applied into it, and the server rewrote
 * it after kubectl's server-side apply, so a key set that way was shown to every reader of the key,
 * in lists, in old revisions and in GitOps reports (found by a review). The write-only fields are cut
 * from the record before anything is stored (src/api/last-applied.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcess } from '../support/in-process.js';

const last = 'kubectl.kubernetes.io/last-applied-configuration';
const json = { 'Content-Type': 'application/json' };
const secret = (tag: string) => `Leaky${tag}${'A1b2C3d4E5'.repeat(4)}`;

describe("kubectl's last-applied record of an access key", () => {
  let server: InProcess;
  const text = async (path: string) => (await server.fetch(`${server.api}/${path}`)).text();
  const annotation = async (name: string) => ((await (await server.fetch(`${server.api}/ownedaccesskeys/${name}`)).json()) as { metadata: { annotations?: Record<string, string> } }).metadata.annotations?.[last];

  beforeAll(async () => {
    server = await startInProcess({});
  });
  afterAll(() => server.close());

  it('kubectl apply --server-side setting spec.key: the value works, and no read, list or old revision shows it', async () => {
    // A key first made by client-side kubectl apply: the record is there, without a value.
    const made = await server.fetch(`${server.api}/ownedaccesskeys`, { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name: 'k1', annotations: { [last]: '{"metadata":{"name":"k1"},"spec":{"user":"ana"}}\n' } }, spec: { user: 'ana' } }) });
    expect(made.status).toBe(201);
    const value = secret('Ssa');
    const applied = await server.fetch(`${server.api}/ownedaccesskeys/k1?fieldManager=kubectl&force=true`, {
      method: 'PATCH',
      headers: { 'Content-Type': 'application/apply-patch+yaml' },
      body: JSON.stringify({ apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', metadata: { name: 'k1' }, spec: { user: 'ana', key: value } }),
    });
    expect(applied.status).toBe(200);
    const rv = ((await applied.json()) as { metadata: { resourceVersion: string } }).metadata.resourceVersion;
    expect((await fetch(`${server.api}/teams`, { headers: { Authorization: `Bearer ${value}` } })).status).toBe(200);
    // The record names what kubectl applied, but for the value.
    expect(JSON.parse((await annotation('k1'))!)).toEqual({ apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', metadata: { name: 'k1' }, spec: { user: 'ana' } });
    for (const body of [await text('ownedaccesskeys/k1'), await text('ownedaccesskeys'), await text(`ownedaccesskeys?resourceVersion=${rv}&resourceVersionMatch=Exact`)]) expect(body).not.toContain(value);
  });

  it('client-side kubectl apply of a manifest with spec.key: the record is stored without the value', async () => {
    const value = secret('Csa');
    const manifest = { apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', metadata: { name: 'k2' }, spec: { user: 'bo', key: value } };
    const made = await server.fetch(`${server.api}/ownedaccesskeys?fieldManager=kubectl-client-side-apply`, { method: 'POST', headers: json, body: JSON.stringify({ ...manifest, metadata: { name: 'k2', annotations: { [last]: `${JSON.stringify(manifest)}\n` } } }) });
    expect(made.status).toBe(201);
    expect(JSON.parse((await annotation('k2'))!)).toEqual({ ...manifest, spec: { user: 'bo' } });
    expect(await text('ownedaccesskeys/k2')).not.toContain(value);
    // A later PUT with the record as kubectl writes it again is cut the same way.
    const current = (await (await server.fetch(`${server.api}/ownedaccesskeys/k2`)).json()) as { metadata: Record<string, unknown> };
    const put = await server.fetch(`${server.api}/ownedaccesskeys/k2`, { method: 'PUT', headers: json, body: JSON.stringify({ ...manifest, metadata: { ...current.metadata, annotations: { [last]: JSON.stringify(manifest) } } }) });
    expect(put.status, await put.clone().text()).toBe(200);
    expect(await text('ownedaccesskeys/k2')).not.toContain(value);
  });

  it('a record on a key that is not a JSON object is not kubectl’s, and is dropped; a Team’s record is left as it is', async () => {
    const value = secret('Yaml');
    const made = await server.fetch(`${server.api}/ownedaccesskeys`, { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name: 'k3', annotations: { [last]: `spec:\n  key: ${value}\n`, kept: 'yes' } }, spec: { user: 'cy' } }) });
    expect(made.status).toBe(201);
    const stored = (await (await server.fetch(`${server.api}/ownedaccesskeys/k3`)).json()) as { metadata: { annotations?: Record<string, string> } };
    expect(stored.metadata.annotations).toEqual({ kept: 'yes', 'management.service/value-set-by': 'admin:admin' });
    const record = '{"metadata":{"name":"t1"},"spec":{"description":"key: not a secret here"}}\n';
    expect((await server.fetch(`${server.api}/teams`, { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name: 't1', annotations: { [last]: record } }, spec: {} }) })).status).toBe(201);
    expect(((await (await server.fetch(`${server.api}/teams/t1`)).json()) as { metadata: { annotations: Record<string, string> } }).metadata.annotations[last]).toBe(record);
  });
});
