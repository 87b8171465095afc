import { ApiException, CustomObjectsApi, KubeConfig, PatchStrategy, Watch, setHeaderOptions } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { selfSignedCert, startServe, type Served } from './serve-process.js';

const group = 'management.service';
const version = 'v1';

interface Obj {
  apiVersion: string;
  kind: string;
  metadata: { name: string; resourceVersion: string; uid: string; labels?: Record<string, string> };
  spec: Record<string, unknown>;
}

/** The Status body of a failed call, whichever form the client hands it over in. */
async function failure(p: Promise<unknown>): Promise<{ code: number; status: Record<string, unknown> }> {
  const err = await p.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ApiException);
  const e = err as ApiException<unknown>;
  const status = (typeof e.body === 'string' ? JSON.parse(e.body) : e.body) as Record<string, unknown>;
  return { code: e.code, status };
}

describe('@kubernetes/client-node against teamkeys serve over TLS', () => {
  let served: Served;
  let kc: KubeConfig;
  let api: CustomObjectsApi;
  // client-node refuses plain HTTP, so this scenario also proves --tls-cert/--tls-key.
  const tls = selfSignedCert();

  beforeAll(async () => {
    served = await startServe(['--tls-cert', tls.cert, '--tls-key', tls.key], { kubeconfigExtra: `    certificate-authority: ${tls.cert}` });
    expect(served.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/kubernetes\/management$/);
    kc = new KubeConfig();
    kc.loadFromFile(served.kubeconfig);
    api = kc.makeApiClient(CustomObjectsApi);
  });
  afterAll(async () => {
    expect(await served.stop()).toBe(0);
    rmSync(tls.dir, { recursive: true, force: true });
  });

  const teams = { group, version, plural: 'teams' };

  it('creates, gets and lists with a label selector', async () => {
    const created = (await api.createClusterCustomObject({
      ...teams,
      body: { apiVersion: `${group}/${version}`, kind: 'Team', metadata: { name: 'platform', labels: { tier: 'core' } }, spec: { users: ['ana'] } },
    })) as Obj;
    expect(created.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
    await api.createClusterCustomObject({ ...teams, body: { kind: 'Team', apiVersion: `${group}/${version}`, metadata: { name: 'other' } } });
    const got = (await api.getClusterCustomObject({ ...teams, name: 'platform' })) as Obj;
    expect(got).toEqual(created);
    const listed = (await api.listClusterCustomObject({ ...teams, labelSelector: 'tier=core' })) as { kind: string; items: Obj[] };
    expect(listed.kind).toBe('TeamList');
    expect(listed.items.map((i) => i.metadata.name)).toEqual(['platform']);
  });

  it('an access key value comes back once, from create, and never from get', async () => {
    const created = (await api.createClusterCustomObject({
      group,
      version,
      plural: 'ownedaccesskeys',
      body: { apiVersion: `${group}/${version}`, kind: 'OwnedAccessKey', metadata: { name: 'ci' }, spec: { user: 'ana', ttl: 3600 } },
    })) as Obj;
    expect(created.spec.key).toMatch(/^tk_[0-9A-Za-z]{49}$/);
    const got = (await api.getClusterCustomObject({ group, version, plural: 'ownedaccesskeys', name: 'ci' })) as Obj;
    expect(got.spec.key).toBeUndefined();
    expect(got.spec.ttl).toBe(3600);
  });

  it('replaces with optimistic concurrency: a stale resourceVersion is 409 Conflict', async () => {
    const current = (await api.getClusterCustomObject({ ...teams, name: 'platform' })) as Obj;
    const replaced = (await api.replaceClusterCustomObject({
      ...teams,
      name: 'platform',
      body: { ...current, spec: { ...current.spec, displayName: 'Platform' } },
    })) as Obj;
    expect(replaced.spec.displayName).toBe('Platform');
    expect(Number(replaced.metadata.resourceVersion)).toBeGreaterThan(Number(current.metadata.resourceVersion));
    const { code, status } = await failure(
      api.replaceClusterCustomObject({ ...teams, name: 'platform', body: { ...current, spec: { displayName: 'stale' } } }),
    );
    expect(code).toBe(409);
    expect(status).toMatchObject({ kind: 'Status', reason: 'Conflict', code: 409 });
  });

  it('patches with JSON patch (the default) and merge patch', async () => {
    const json = (await api.patchClusterCustomObject({
      ...teams,
      name: 'platform',
      body: [{ op: 'add', path: '/spec/users/-', value: 'bo' }],
    })) as Obj;
    expect(json.spec.users).toEqual(['ana', 'bo']);
    const merged = (await api.patchClusterCustomObject(
      { ...teams, name: 'platform', body: { spec: { description: 'merged' } } },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
    )) as Obj;
    expect(merged.spec).toMatchObject({ users: ['ana', 'bo'], description: 'merged' });
    const { code, status } = await failure(
      api.patchClusterCustomObject(
        { ...teams, name: 'platform', body: { spec: {} } },
        setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
      ),
    );
    expect(code).toBe(415);
    expect(status.reason).toBe('UnsupportedMediaType');
  });

  it('watches changes from a resourceVersion', async () => {
    const current = (await api.listClusterCustomObject(teams)) as { metadata: { resourceVersion: string } };
    const events: [string, Obj][] = [];
    const watch = new Watch(kc);
    let finish: () => void = () => {};
    const seen = new Promise<void>((resolve) => (finish = resolve));
    const controller = await watch.watch(
      `/apis/${group}/${version}/teams`,
      { resourceVersion: current.metadata.resourceVersion },
      (type, obj: Obj) => {
        events.push([type, obj]);
        if (type === 'DELETED') finish();
      },
      () => finish(),
    );
    await api.patchClusterCustomObject({ ...teams, name: 'other', body: [{ op: 'add', path: '/spec', value: { displayName: 'O' } }] });
    await api.deleteClusterCustomObject({ ...teams, name: 'other' });
    await Promise.race([seen, new Promise((r) => setTimeout(r, 5000))]);
    controller.abort();
    expect(events.map(([t, o]) => [t, o.metadata.name])).toEqual([
      ['MODIFIED', 'other'],
      ['DELETED', 'other'],
    ]);
  });

  it('deletes, and a missing object is a 404 Status', async () => {
    const status = (await api.deleteClusterCustomObject({ ...teams, name: 'platform' })) as Record<string, unknown>;
    expect(status).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'platform', kind: 'teams' } });
    const { code, status: missing } = await failure(api.getClusterCustomObject({ ...teams, name: 'platform' }));
    expect(code).toBe(404);
    expect(missing).toMatchObject({ reason: 'NotFound', message: 'teams.management.service "platform" not found' });
  });
});
