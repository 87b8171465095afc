/**
 * API-machinery details clients rely on, answered as kube-apiserver answers them for a custom
 * resource (issue 26): boolean parameters, watch-list, paging and transfer, field validation of
 * duplicate keys, metadata-only reads, update checks, deletion without grace periods, discovery.
 */
import { get as httpGet } from 'node:http';
import { Writable } from 'node:stream';
import { gunzipSync } from 'node:zlib';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminHeaders, readEvents, startInProcess, type InProcess } from './in-process.js';

const json = { 'Content-Type': 'application/json' };
const yaml = { 'Content-Type': 'application/yaml' };
type Obj = { kind: string; apiVersion: string; metadata: Record<string, unknown>; items?: Obj[]; spec?: unknown };

describe('kube-apiserver parity over HTTP', () => {
  let server: InProcess;
  const call = async (path: string, init: RequestInit = {}) => {
    const res = await server.fetch(path.startsWith('http') ? path : `${server.api}${path}`, init);
    return { res, body: (await res.json()) as Obj & { message?: string; reason?: string; status?: string; code?: number; details?: { causes?: { reason: string }[]; retryAfterSeconds?: number } } };
  };
  const create = (name: string, spec: Record<string, unknown> = {}, labels: Record<string, string> = {}) =>
    call('/teams', { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name, labels }, spec }) });

  /** The server's log lines, to tell what it logs at error level. */
  const logged: { level: number; msg: string; err?: { stack?: string } }[] = [];
  const sink = new Writable({ write: (chunk: Buffer, _enc, done) => done(void logged.push(JSON.parse(chunk.toString()) as (typeof logged)[number])) });

  beforeAll(async () => {
    server = await startInProcess({ logger: pino({ level: 'info' }, sink) });
    for (const n of ['p1', 'p2', 'p3']) await create(n, {}, { set: 'paged' });
  });
  afterAll(() => server.close());

  describe('point 1: booleans as kube reads them (anything but 0 and false, any case, is true; empty too)', () => {
    it('watch=True streams a watch (the Python client), watch= too; watch=FALSE lists', async () => {
      for (const value of ['True', '']) {
        const res = await server.fetch(`${server.api}/teams?watch=${value}&labelSelector=set%3Dpaged&timeoutSeconds=5`);
        expect(res.status).toBe(200);
        const events = await readEvents(res, 3);
        expect(events.map((e) => e.type)).toEqual(['ADDED', 'ADDED', 'ADDED']);
      }
      const listed = await call('/teams?watch=FALSE&allowWatchBookmarks=True');
      expect(listed.body.kind).toBe('TeamList');
    });

    it('force=True lets server-side apply take a conflicting field', async () => {
      const apply = (manager: string, force: string) =>
        server.fetch(`${server.api}/teams/forced?fieldManager=${manager}&force=${force}`, {
          method: 'PATCH',
          headers: { 'Content-Type': 'application/apply-patch+yaml' },
          body: `apiVersion: management.service/v1\nkind: Team\nmetadata: {name: forced}\nspec: {displayName: ${manager}}\n`,
        });
      expect((await apply('one', 'False')).status).toBe(201);
      expect((await apply('two', 'False')).status).toBe(409);
      expect((await apply('two', 'True')).status).toBe(200);
    });
  });

  describe('point 5: watch-list (client-go sendInitialEvents)', () => {
    it('sends the current objects, then the initial-events-end bookmark at their revision, then changes', async () => {
      const res = await server.fetch(`${server.api}/teams?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&labelSelector=set%3Dpaged`);
      expect(res.status).toBe(200);
      const initial = await readEvents(res, 4);
      expect(initial.map((e) => [e.type, (e.object.metadata as { name?: string }).name])).toEqual([
        ['ADDED', 'p1'],
        ['ADDED', 'p2'],
        ['ADDED', 'p3'],
        ['BOOKMARK', undefined],
      ]);
      const bookmark = initial[3]!.object as Obj;
      expect(bookmark).toMatchObject({ kind: 'Team', apiVersion: 'management.service/v1', metadata: { annotations: { 'k8s.io/initial-events-end': 'true' } } });
      const listRv = (await call('/teams?labelSelector=set%3Dpaged')).body.metadata.resourceVersion as string;
      expect(Number(bookmark.metadata.resourceVersion)).toBeLessThanOrEqual(Number(listRv));
    });

    it('sendInitialEvents=false from a resourceVersion sends changes only', async () => {
      const rv = (await call('/teams')).body.metadata.resourceVersion as string;
      const res = await server.fetch(`${server.api}/teams?watch=true&sendInitialEvents=false&resourceVersionMatch=NotOlderThan&resourceVersion=${rv}`);
      await create('wl-after');
      const events = await readEvents(res, 1);
      expect(events.map((e) => [e.type, (e.object.metadata as { name: string }).name])).toEqual([['ADDED', 'wl-after']]);
    });

    it.each([
      ['sendInitialEvents on a list', '/teams?sendInitialEvents=true', 'sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list'],
      ['sendInitialEvents without NotOlderThan', '/teams?watch=true&sendInitialEvents=true', 'resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'],
      ['resourceVersionMatch=Exact on a watch', '/teams?watch=true&sendInitialEvents=true&resourceVersionMatch=Exact&resourceVersion=1', 'resourceVersionMatch: Unsupported value: "Exact": supported values: "NotOlderThan"'],
      ['NotOlderThan without a resourceVersion on a list', '/teams?resourceVersionMatch=NotOlderThan', 'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided'],
    ])('%s is 422 on ListOptions', async (_label, path, message) => {
      const { res, body } = await call(path);
      expect(res.status).toBe(422);
      expect(body.reason).toBe('Invalid');
      expect(body.message).toContain('ListOptions.meta.k8s.io "" is invalid: ');
      expect(body.message).toContain(message);
    });
  });

  describe('point 6: paging and transfer', () => {
    it('a page without selectors counts what remains (remainingItemCount)', async () => {
      const all = (await call('/teams')).body.items!.length;
      const page = (await call('/teams?limit=1')).body;
      expect(page.metadata.continue).toBeDefined();
      expect(page.metadata.remainingItemCount).toBe(all - 1);
      expect((await call('/teams?limit=1&labelSelector=set%3Dpaged')).body.metadata.remainingItemCount).toBeUndefined();
    });

    it('limit=-1 means no limit', async () => {
      const { res, body } = await call('/teams?limit=-1');
      expect(res.status).toBe(200);
      expect(body.metadata.continue).toBeUndefined();
      expect(body.items!.length).toBe((await call('/teams')).body.items!.length);
    });

    it('an expired continue token is 410 with a fresh token for the rest of the list, read at the current revision', async () => {
      const first = (await call('/teams?limit=1&labelSelector=set%3Dpaged')).body;
      expect(first.items!.map((i) => i.metadata.name)).toEqual(['p1']);
      await create('p4', {}, { set: 'paged' });
      await server.registry.store.compact(await server.registry.store.currentRevision());
      const { res, body } = await call(`/teams?limit=1&labelSelector=set%3Dpaged&continue=${first.metadata.continue as string}`);
      expect(res.status).toBe(410);
      expect(body.reason).toBe('Expired');
      expect(body.message).toContain('use the continue token in this response to retrieve the remainder of the results');
      const fresh = body.metadata.continue as string;
      const rest = (await call(`/teams?labelSelector=set%3Dpaged&continue=${fresh}`)).body;
      expect(rest.items!.map((i) => i.metadata.name)).toEqual(['p2', 'p3', 'p4']);
    });

    it('a read at a future resourceVersion is 504 Too large resource version, with its cause and a retry delay', async () => {
      for (const path of ['/teams/p1?resourceVersion=999999', '/teams?resourceVersion=999999']) {
        const { res, body } = await call(path);
        expect(res.status).toBe(504);
        expect(res.headers.get('retry-after')).toBe('1');
        expect(body.reason).toBe('Timeout');
        expect(body.message).toMatch(/^Timeout: Too large resource version: 999999, current: \d+$/);
        expect(body.details).toMatchObject({ retryAfterSeconds: 1, causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }] });
      }
      // A client's read ahead of the store is no server fault: no error-level line, no stack trace.
      expect(logged.filter((l) => l.level >= 50 || l.err?.stack)).toEqual([]);
      expect(logged.some((l) => l.msg === 'request timed out')).toBe(true);
    });

    it('gzips responses of 128 KiB or more for clients that accept it, and never a watch', async () => {
      const description = 'x'.repeat(4096);
      for (let i = 0; i < 40; i++) await create(`big-${String(i).padStart(2, '0')}`, { description }, { set: 'big' });
      const raw = (path: string) =>
        new Promise<{ headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
          const req = httpGet(`${server.api}${path}`, { headers: { ...adminHeaders, 'Accept-Encoding': 'gzip' } }, (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => {
              chunks.push(c);
              if (path.includes('watch')) req.destroy();
            });
            res.on('close', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
          });
          req.on('error', (err) => (path.includes('watch') ? undefined : reject(err)));
        });
      const big = await raw('/teams?labelSelector=set%3Dbig');
      expect(big.headers['content-encoding']).toBe('gzip');
      const list = JSON.parse(gunzipSync(big.body).toString()) as Obj;
      expect(list.items!.length).toBe(40);
      expect(big.body.length).toBeLessThan(128 * 1024);
      const small = await raw('/teams?labelSelector=set%3Dpaged');
      expect(small.headers['content-encoding']).toBeUndefined();
      const watch = await raw('/teams?watch=true&labelSelector=set%3Dbig');
      expect(watch.headers['content-encoding']).toBeUndefined();
      expect(watch.body.toString()).toContain('"type":"ADDED"');
    });
  });

  describe('point 7: duplicate keys under fieldValidation', () => {
    const dupJson = (name: string) => `{"metadata":{"name":"${name}"},"spec":{"displayName":"a","displayName":"b"}}`;
    const dupYaml = (name: string) => `metadata:\n  name: ${name}\nspec:\n  displayName: a\n  displayName: b\n`;

    it('Strict refuses a JSON or YAML body with a duplicate key (400)', async () => {
      const j = await call('/teams?fieldValidation=Strict', { method: 'POST', headers: json, body: dupJson('dup-strict') });
      expect(j.res.status).toBe(400);
      expect(j.body.message).toBe('strict decoding error: duplicate field "spec.displayName"');
      const y = await call('/teams?fieldValidation=Strict', { method: 'POST', headers: yaml, body: dupYaml('dup-strict') });
      expect(y.res.status).toBe(400);
      expect(y.body.message).toBe('strict decoding error: line 5: key "displayName" already set in map');
    });

    it('Warn accepts it with a warning, the last value winning; Ignore accepts it silently', async () => {
      const j = await call('/teams?fieldValidation=Warn', { method: 'POST', headers: json, body: dupJson('dup-warn') });
      expect(j.res.status).toBe(201);
      expect(j.res.headers.get('warning')).toBe('299 - "duplicate field \\"spec.displayName\\""');
      expect(j.body.spec).toEqual({ displayName: 'b' });
      const y = await call('/teams', { method: 'POST', headers: yaml, body: dupYaml('dup-yaml') });
      expect(y.res.status).toBe(201);
      expect(y.res.headers.get('warning')).toBe('299 - "line 5: key \\"displayName\\" already set in map"');
      // kubectl sends server-side applies as JSON under the YAML media type.
      const applied = await call('/teams/dup-apply?fieldManager=kubectl', { method: 'PATCH', headers: { 'Content-Type': 'application/apply-patch+yaml' }, body: dupJson('dup-apply') });
      expect(applied.res.status).toBe(201);
      expect(applied.res.headers.get('warning')).toBe('299 - "duplicate field \\"spec.displayName\\""');
      const ignored = await call('/teams?fieldValidation=Ignore', { method: 'POST', headers: yaml, body: dupYaml('dup-ignore') });
      expect(ignored.res.status).toBe(201);
      expect(ignored.res.headers.get('warning')).toBeNull();
    });

    it('names at most 100 duplicates, each path cut to 256 characters (a review: 400 duplicates under a 1 MB key made a 400 MB message)', async () => {
      const long = 'k'.repeat(1_000_000);
      const many = Array.from({ length: 400 }, () => '"a":1').join(',');
      const body = `{"metadata":{"name":"dup-long"},"spec":{"${long}":{${many}}}}`;
      const j = await call('/teams?fieldValidation=Strict&dryRun=All', { method: 'POST', headers: json, body });
      expect(j.res.status).toBe(400);
      // The 101st: more duplicates, not named; the 102nd: the long key is no field of a Team.
      const named = `duplicate field "spec.${'k'.repeat(251)}..."`;
      expect(j.body.message).toBe(`strict decoding error: ${Array.from({ length: 100 }, () => named).join(', ')}, and 2 more`);
      const one = await call('/teams?fieldValidation=Strict&dryRun=All', { method: 'POST', headers: json, body: `{"metadata":{"name":"dup-long"},"spec":{"${long}":1}}` });
      expect(one.body.message).toBe(`strict decoding error: unknown field "spec.${'k'.repeat(251)}..."`);
      const y = await call('/teams?fieldValidation=Strict&dryRun=All', { method: 'POST', headers: yaml, body: `metadata:\n  name: dup-long\nspec:\n${Array.from({ length: 150 }, () => `  ${long.slice(0, 1000)}: 1\n`).join('')}` });
      expect(y.res.status).toBe(400);
      expect(y.body.message!.length).toBeLessThan(40_000);
      expect(y.body.message).toMatch(/^strict decoding error: line 5: key "k{256}\.\.\." already set in map, .*, and 2 more$/);
      expect(y.body.message!.match(/already set in map/g)).toHaveLength(100);
      // Warn: the warnings are the same, cut to kube's 4 KiB of headers.
      const w = await call('/teams?fieldValidation=Warn&dryRun=All', { method: 'POST', headers: json, body });
      expect(w.res.status).toBe(201);
      expect(w.res.headers.get('warning')!.length).toBeLessThanOrEqual(4 * 1024 + 64);
      expect(w.res.headers.get('warning')).toContain(`299 - "duplicate field \\"spec.${'k'.repeat(100)}`);
    });
  });

  describe('point 8: metadata-only reads (PartialObjectMetadata)', () => {
    const metaList = 'application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
    it('lists, gets and watches metadata only, as client-go metadata clients ask', async () => {
      const list = await call('/teams?labelSelector=set%3Dpaged', { headers: { Accept: metaList } });
      expect(list.res.status).toBe(200);
      expect(list.body).toMatchObject({ kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1' });
      const items = list.body.items!;
      expect(items.map((i) => i.metadata.name)).toEqual(expect.arrayContaining(['p1', 'p2', 'p3']));
      for (const i of items) expect([i.kind, i.apiVersion, i.spec]).toEqual(['PartialObjectMetadata', 'meta.k8s.io/v1', undefined]);
      const one = await call('/teams/p1', { headers: { Accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1' } });
      expect(one.body).toMatchObject({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: { name: 'p1' } });
      const res = await server.fetch(`${server.api}/teams?watch=true&labelSelector=set%3Dpaged`, { headers: { Accept: 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1' } });
      const [event] = await readEvents(res, 1);
      expect(event!.object).toMatchObject({ kind: 'PartialObjectMetadata', metadata: { name: 'p1' } });
      expect(event!.object.spec).toBeUndefined();
    });
  });

  describe('point 9: update checks', () => {
    it('setting metadata.deletionTimestamp by PUT or patch is 422 field is immutable', async () => {
      const current = (await call('/teams/p2')).body;
      const put = await call('/teams/p2', { method: 'PUT', headers: json, body: JSON.stringify({ ...current, metadata: { ...current.metadata, deletionTimestamp: '2030-01-01T00:00:00Z' } }) });
      expect(put.res.status).toBe(422);
      expect(put.body.message).toContain('metadata.deletionTimestamp: Invalid value: "2030-01-01T00:00:00Z": field is immutable');
      const patch = await call('/teams/p2', { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: '{"metadata":{"deletionTimestamp":"2030-01-01T00:00:00Z"}}' });
      expect(patch.res.status).toBe(422);
      expect((await call('/teams/p2')).body.metadata.deletionTimestamp).toBeUndefined();
    });

    it('a PUT whose body has no name is 400', async () => {
      const current = (await call('/teams/p2')).body;
      const { name: _name, ...meta } = current.metadata;
      const { res, body } = await call('/teams/p2', { method: 'PUT', headers: json, body: JSON.stringify({ ...current, metadata: meta }) });
      expect(res.status).toBe(400);
      expect(body.message).toBe('the name of the object () does not match the name on the URL (p2)');
    });

    it.each([
      ['POST', '/teams?dryRun=Bogus', 'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Bogus"}: supported values: "All"'],
      ['POST', '/teams?fieldValidation=bogus', 'CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "bogus": supported values: "", "Ignore", "Strict", "Warn"'],
      ['PUT', '/teams/p2?dryRun=Bogus', 'UpdateOptions.meta.k8s.io "" is invalid: dryRun'],
      ['PATCH', '/teams/p2?fieldValidation=bogus', 'PatchOptions.meta.k8s.io "" is invalid: fieldValidation'],
      ['DELETE', '/teams/p2?dryRun=Bogus', 'DeleteOptions.meta.k8s.io "" is invalid: dryRun'],
    ])('%s %s is 422 Invalid on the options kind', async (method, path, message) => {
      const body = method === 'PATCH' ? '{}' : method === 'DELETE' ? undefined : '{"metadata":{"name":"p2"}}';
      const headers = method === 'PATCH' ? { 'Content-Type': 'application/merge-patch+json' } : json;
      const r = await call(path, { method, headers, ...(body ? { body } : {}) });
      expect(r.res.status).toBe(422);
      expect(r.body.reason).toBe('Invalid');
      expect(r.body.message).toContain(message);
    });
  });

  describe('point 4: deletion without grace periods, as for custom resources', () => {
    it('gracePeriodSeconds (positive or negative, query or body) deletes at once', async () => {
      for (const [name, init] of [
        ['g-query', { path: '?gracePeriodSeconds=30' }],
        ['g-negative', { path: '?gracePeriodSeconds=-1' }],
        ['g-body', { path: '', body: '{"gracePeriodSeconds":-5}' }],
      ] as const) {
        await create(name);
        const r = await call(`/teams/${name}${init.path}`, { method: 'DELETE', ...('body' in init ? { headers: json, body: init.body } : {}) });
        expect([name, r.res.status, r.body.kind, r.body.status]).toEqual([name, 200, 'Status', 'Success']);
        expect((await call(`/teams/${name}`)).res.status).toBe(404);
      }
    });
  });

  describe('point 2: discovery for kubectl', () => {
    it('serves the core version v1 with an empty events list, and OpenAPI v2 from the v3 schemas', async () => {
      const root = `${server.base}/kubernetes/management`;
      expect((await call(`${root}/api`)).body).toMatchObject({ kind: 'APIVersions', versions: ['v1'] });
      expect(((await call(`${root}/api/v1`)).body as unknown as { resources: unknown[] }).resources).toContainEqual({ name: 'events', singularName: 'event', namespaced: true, kind: 'Event', verbs: ['get', 'list', 'watch'], shortNames: ['ev'] });
      expect((await call(`${root}/api/v1/namespaces/default/events`)).body).toMatchObject({ kind: 'EventList', apiVersion: 'v1', items: [] });
      const v2 = (await call(`${root}/openapi/v2`)).body as unknown as { swagger: string; definitions: Record<string, { 'x-kubernetes-group-version-kind'?: unknown }>; paths: Record<string, { patch?: { consumes: string[] } }> };
      expect(v2.swagger).toBe('2.0');
      expect(v2.definitions['service.management.v1.Team']?.['x-kubernetes-group-version-kind']).toEqual([{ group: 'management.service', version: 'v1', kind: 'Team' }]);
      expect(v2.paths['/apis/management.service/v1/teams/{name}']?.patch?.consumes).toEqual(['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml']);
      const pb = await server.fetch(`${root}/openapi/v2`, { headers: { Accept: 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf' } });
      expect(pb.headers.get('content-type')).toBe('application/octet-stream');
      expect(Buffer.from(await pb.arrayBuffer()).subarray(0, 5)).toEqual(Buffer.from([0x0a, 3, 0x32, 0x2e, 0x30]));
    });

    it("lists kubectl's default prune kinds, verb list only, always empty; anything else 405; a key still required", async () => {
      const root = `${server.base}/kubernetes/management`;
      const groups = ((await call(`${root}/apis`)).body as unknown as { groups: { name: string }[] }).groups.map((g) => g.name);
      expect(groups).toEqual(['management.service', 'batch', 'networking.k8s.io', 'apps', 'authentication.k8s.io', 'authorization.k8s.io']);
      const kinds = async (gv: string) =>
        ((await call(`${root}/${gv}`)).body as unknown as { resources: { kind: string; namespaced: boolean; verbs: string[] }[] }).resources
          .filter((r) => r.kind !== 'Event')
          .map((r) => `${r.kind}${r.namespaced ? '' : ' (cluster)'} ${r.verbs.join()}`);
      expect(await kinds('api/v1')).toEqual([
        'ConfigMap list', 'Endpoints list', 'Namespace (cluster) list', 'PersistentVolumeClaim list', 'PersistentVolume (cluster) list',
        'Pod list', 'ReplicationController list', 'Secret list', 'Service list',
      ]);
      expect(await kinds('apis/apps/v1')).toEqual(['DaemonSet list', 'Deployment list', 'ReplicaSet list', 'StatefulSet list']);
      expect(await kinds('apis/batch/v1')).toEqual(['Job list', 'CronJob list']);
      expect(await kinds('apis/networking.k8s.io/v1')).toEqual(['Ingress list']);
      for (const [path, kind, apiVersion] of [
        ['api/v1/namespaces/team-a/configmaps?labelSelector=app%3Dx', 'ConfigMapList', 'v1'],
        ['api/v1/secrets', 'SecretList', 'v1'],
        ['api/v1/namespaces', 'NamespaceList', 'v1'],
        ['apis/apps/v1/namespaces/default/deployments', 'DeploymentList', 'apps/v1'],
        ['apis/batch/v1/cronjobs', 'CronJobList', 'batch/v1'],
        ['apis/networking.k8s.io/v1/namespaces/x/ingresses', 'IngressList', 'networking.k8s.io/v1'],
      ]) {
        const r = await call(`${root}/${path}`);
        expect([path, r.res.status, r.body.kind, r.body.apiVersion, r.body.items]).toEqual([path, 200, kind, apiVersion, []]);
      }
      const message = (verb: string) => `${verb} is not supported on configmaps: this server serves only management.service; ConfigMap is listed so kubectl's defaults work`;
      for (const [verb, path, init] of [
        ['POST', 'namespaces/x/configmaps', { method: 'POST', headers: json, body: '{"metadata":{"name":"c"}}' }],
        ['GET', 'namespaces/x/configmaps/c', {}],
        ['DELETE', 'namespaces/x/configmaps/c', { method: 'DELETE' }],
        ['watch', 'configmaps?watch=true', {}],
      ] as const) {
        const r = await call(`${root}/api/v1/${path}`, init);
        expect([r.res.status, r.body.reason, r.body.message]).toEqual([405, 'MethodNotAllowed', message(verb)]);
      }
      for (const path of ['api/v1/configmaps', 'apis/apps/v1', 'apis/apps/v1/namespaces/x/deployments', 'api/v1/namespaces/x/events']) {
        expect([path, (await fetch(`${root}/${path}`)).status]).toEqual([path, 401]);
      }
    });
  });
});
