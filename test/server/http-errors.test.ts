import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcess } from './in-process.js';

interface Case {
  label: string;
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  code: number;
  reason: string;
  message?: string;
}

const json = { 'Content-Type': 'application/json' };
const team = JSON.stringify({ apiVersion: 'management.service/v1', kind: 'Team', metadata: { name: 'ok' } });
const deep = '['.repeat(5000) + ']'.repeat(5000);
const aliasBomb = ['a: &a ["x","x","x","x","x","x","x","x","x"]', 'b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]', 'c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]', 'd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]', 'e: [*d,*d,*d,*d,*d,*d,*d,*d,*d]'].join('\n');

const cases: Case[] = [
  { label: 'an unknown path', method: 'GET', path: '/kubernetes/management/nope', code: 404, reason: 'NotFound', message: 'the server could not find the requested resource' },
  { label: 'an unknown resource', method: 'GET', path: '@/widgets', code: 404, reason: 'NotFound' },
  { label: 'a malformed percent-escape in the path', method: 'GET', path: '@/teams/%zz', code: 400, reason: 'BadRequest', message: 'is not a valid url component' },
  { label: 'a namespaced path', method: 'GET', path: '@/namespaces/default/teams', code: 404, reason: 'NotFound' },
  { label: 'an unknown subresource', method: 'GET', path: '@/teams/ok/scale', code: 404, reason: 'NotFound' },
  { label: 'POST to an item', method: 'POST', path: '@/teams/ok', headers: json, body: team, code: 405, reason: 'MethodNotAllowed' },
  { label: 'PUT to the collection', method: 'PUT', path: '@/teams', headers: json, body: team, code: 405, reason: 'MethodNotAllowed' },
  { label: 'a text/plain body', method: 'POST', path: '@/teams', headers: { 'Content-Type': 'text/plain' }, body: team, code: 415, reason: 'UnsupportedMediaType' },
  { label: 'a body without Content-Type', method: 'POST', path: '@/teams', body: team, code: 415, reason: 'UnsupportedMediaType' },
  { label: 'malformed JSON', method: 'POST', path: '@/teams', headers: json, body: '{"metadata": {', code: 400, reason: 'BadRequest', message: 'the request body is not valid JSON' },
  { label: 'malformed YAML', method: 'POST', path: '@/teams', headers: { 'Content-Type': 'application/yaml' }, body: 'metadata:\n  name: [x\n', code: 400, reason: 'BadRequest', message: 'the request body is not valid YAML' },
  { label: 'a YAML alias bomb', method: 'POST', path: '@/teams', headers: { 'Content-Type': 'application/yaml' }, body: aliasBomb, code: 400, reason: 'BadRequest' },
  { label: 'JSON nested 5,000 deep', method: 'POST', path: '@/teams', headers: json, body: deep, code: 400, reason: 'BadRequest', message: 'nested more than 100 levels' },
  { label: 'invalid UTF-8', method: 'POST', path: '@/teams', headers: json, body: Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]), code: 400, reason: 'BadRequest', message: 'not valid UTF-8' },
  { label: 'a body over 3 MiB', method: 'POST', path: '@/teams', headers: json, body: `{"x":"${'a'.repeat(3 * 1024 * 1024)}"}`, code: 413, reason: 'RequestEntityTooLarge' },
  { label: 'an empty body', method: 'POST', path: '@/teams', headers: json, body: '', code: 400, reason: 'BadRequest', message: 'empty' },
  { label: 'a strategic merge patch', method: 'PATCH', path: '@/teams/ok', headers: { 'Content-Type': 'application/strategic-merge-patch+json' }, body: '{}', code: 415, reason: 'UnsupportedMediaType' },
  { label: 'a JSON patch that is not a list', method: 'PATCH', path: '@/teams/ok', headers: { 'Content-Type': 'application/json-patch+json' }, body: '{}', code: 400, reason: 'BadRequest' },
  { label: 'a bad label selector', method: 'GET', path: '@/teams?labelSelector=env%20in%20(x', code: 400, reason: 'BadRequest', message: 'unable to parse requirement' },
  { label: 'a bad field selector', method: 'GET', path: '@/teams?fieldSelector=spec.users%3Dx', code: 400, reason: 'BadRequest', message: 'is not a known field selector' },
  { label: 'a bad continue token', method: 'GET', path: '@/teams?limit=1&continue=%25%25', code: 400, reason: 'BadRequest', message: 'continue key is not valid' },
  { label: 'a non-numeric limit', method: 'GET', path: '@/teams?limit=ten', code: 400, reason: 'BadRequest', message: 'limit' },
  { label: 'a bad resourceVersion', method: 'GET', path: '@/teams?resourceVersion=abc', code: 400, reason: 'BadRequest' },
  { label: 'a future resourceVersion', method: 'GET', path: '@/teams?resourceVersion=999999', code: 504, reason: 'Timeout', message: 'Too large resource version' },
  { label: 'a bad dryRun value', method: 'POST', path: '@/teams?dryRun=Some', headers: json, body: team, code: 422, reason: 'Invalid', message: 'dryRun' },
  { label: 'a bad fieldValidation value', method: 'POST', path: '@/teams?fieldValidation=Loose', headers: json, body: team, code: 422, reason: 'Invalid', message: 'fieldValidation' },
  { label: 'a DeleteOptions body of the wrong type', method: 'DELETE', path: '@/teams/ok', headers: json, body: '{"gracePeriodSeconds":"soon"}', code: 400, reason: 'BadRequest' },
  { label: 'an Accept the server cannot produce', method: 'GET', path: '@/teams', headers: { Accept: 'text/html' }, code: 406, reason: 'NotAcceptable' },
  { label: 'a missing object', method: 'GET', path: '@/teams/ghost', code: 404, reason: 'NotFound', message: 'teams.management.service "ghost" not found' },
];

describe('bad HTTP requests are answered with a Status, and the server keeps serving', () => {
  let server: InProcess;
  beforeAll(async () => {
    server = await startInProcess();
    await server.fetch(`${server.api}/teams`, { method: 'POST', headers: json, body: team });
  });
  afterAll(() => server.close());

  it.each(cases)('$label -> $code $reason', async (c) => {
    const url = c.path.startsWith('@') ? server.api + c.path.slice(1) : server.base + c.path;
    const init: RequestInit = { method: c.method, headers: c.headers ?? {} };
    if (c.body !== undefined) init.body = c.body;
    const res = await server.fetch(url, init);
    expect(res.status).toBe(c.code);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const status = (await res.json()) as { kind: string; status: string; code: number; reason: string; message: string };
    expect(status).toMatchObject({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: c.code, reason: c.reason });
    if (c.message) expect(status.message).toContain(c.message);
    // Still serving.
    expect((await fetch(`${server.base}/readyz`)).status).toBe(200);
    expect((await server.fetch(`${server.api}/teams/ok`)).status).toBe(200);
  });

  it('health endpoints answer without credentials', async () => {
    for (const path of ['/healthz', '/livez', '/readyz']) {
      const res = await fetch(server.base + path);
      expect([path, res.status, await res.text()]).toEqual([path, 200, 'ok']);
    }
  });

  it('answers YAML to a client that accepts only YAML, and accepts YAML bodies', async () => {
    const created = await server.fetch(`${server.api}/teams`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/yaml', Accept: 'application/yaml' },
      body: 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: yaml-team\nspec:\n  users: [ana]\n',
    });
    expect(created.status).toBe(201);
    expect(created.headers.get('content-type')).toMatch(/^application\/yaml/);
    expect(await created.text()).toContain('name: yaml-team');
  });

  it('sends a Warning header for each unknown field it drops', async () => {
    const res = await server.fetch(`${server.api}/teams`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ metadata: { name: 'warned' }, spec: { colour: 'red' } }),
    });
    expect(res.status).toBe(201);
    expect(res.headers.get('warning')).toBe('299 - "unknown field \\"spec.colour\\""');
  });

  it('serves teams/<name>/accesskeys', async () => {
    await server.fetch(`${server.api}/ownedaccesskeys`, { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name: 'k1' }, spec: { team: 'ok' } }) });
    await server.fetch(`${server.api}/ownedaccesskeys`, { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name: 'k2' }, spec: { user: 'ana' } }) });
    const res = await server.fetch(`${server.api}/teams/ok/accesskeys`);
    const body = (await res.json()) as { accessKeys: { metadata: { name: string }; spec: { key?: string } }[] };
    expect(body.accessKeys.map((k) => k.metadata.name)).toEqual(['k1']);
    expect(body.accessKeys[0]!.spec.key).toBeUndefined();
    expect((await server.fetch(`${server.api}/teams/ghost/accesskeys`)).status).toBe(404);
  });
});
