/**
 * What kube-apiserver answers for a custom resource, where clients nobody here wrote notice it
 * (issue 39): PatchOptions refused by the patch's type, a failed JSON patch and its array indices,
 * and the head and body of every response. The Python client's trailing-slash discovery is in
 * python-client.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcess } from '../support/in-process.js';

const json = { 'Content-Type': 'application/json' };
const jsonPatch = { 'Content-Type': 'application/json-patch+json' };
const mergePatch = { 'Content-Type': 'application/merge-patch+json' };
const applyPatch = { 'Content-Type': 'application/apply-patch+yaml' };
const teamBody = (name: string, users: string[]) => ({ apiVersion: 'management.service/v1', kind: 'Team', metadata: { name }, spec: { displayName: name, users } });

describe('the last mile of kube compatibility', () => {
  let server: InProcess;
  const call = async (path: string, init: RequestInit = {}) => {
    const res = await server.fetch(path.startsWith('http') ? path : `${server.api}${path}`, init);
    const text = await res.text();
    return { res, text, body: JSON.parse(text) as Record<string, unknown> & { spec?: { users?: string[] }; metadata?: { managedFields?: { manager: string; operation: string; fieldsV1: unknown }[] } } };
  };
  const patch = (name: string, headers: Record<string, string>, body: unknown, query = '') => call(`/teams/${name}${query}`, { method: 'PATCH', headers, body: JSON.stringify(body) });
  /** A fresh team with users a, b, c, so each index test starts from the same list. */
  const fresh = async (name: string) => {
    const { res } = await call('/teams', { method: 'POST', headers: json, body: JSON.stringify(teamBody(name, ['a', 'b', 'c'])) });
    expect(res.status).toBe(201);
  };

  beforeAll(async () => {
    server = await startInProcess({ audit: true });
  });
  afterAll(async () => {
    await server?.close();
  });

  describe('PatchOptions', () => {
    it('server-side apply without fieldManager is 422 in kube words, and nothing is created', async () => {
      const { res, body } = await patch('no-manager', applyPatch, teamBody('no-manager', ['a']));
      expect(res.status).toBe(422);
      expect(body).toEqual({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
        reason: 'Invalid',
        details: { group: 'meta.k8s.io', kind: 'PatchOptions', causes: [{ reason: 'FieldValueRequired', message: 'Required value: is required for apply patch', field: 'fieldManager' }] },
        code: 422,
      });
      expect((await call('/teams/no-manager')).res.status).toBe(404);
    });

    it('force on a merge or JSON patch is 422 force: Forbidden, even force=false, and the object is unchanged', async () => {
      await fresh('forced');
      for (const [headers, body, query] of [
        [mergePatch, { spec: { description: 'x' } }, '?force=true'],
        [jsonPatch, [{ op: 'add', path: '/spec/description', value: 'x' }], '?force=true'],
        [mergePatch, { spec: { description: 'x' } }, '?force=false'],
      ] as const) {
        const { res, body: status } = await patch('forced', headers, body, query);
        expect(res.status, `${headers['Content-Type']}${query}`).toBe(422);
        expect(status).toMatchObject({ reason: 'Invalid', message: 'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch' });
      }
      expect((await call('/teams/forced')).body.spec).toEqual({ displayName: 'forced', users: ['a', 'b', 'c'] });
      // Apply takes it, as before.
      expect((await patch('forced', applyPatch, teamBody('forced', ['a']), '?fieldManager=me&force=true')).res.status).toBe(200);
    });
  });

  describe('JSON patch', () => {
    it('an operation that does not apply is kube-apiserver\'s generic 422 with empty details', async () => {
      await fresh('failing');
      for (const op of [
        { op: 'test', path: '/spec/users/0', value: 'zz' },
        { op: 'remove', path: '/spec/nothere' },
        { op: 'replace', path: '/spec/users/7', value: 'zz' },
      ]) {
        const { res, body } = await patch('failing', jsonPatch, [op]);
        expect(res.status, JSON.stringify(op)).toBe(422);
        expect(body).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'the server rejected our request due to an error in our request', reason: 'Invalid', details: {}, code: 422 });
      }
    });

    // json-patch reads an index with Go's strconv.Atoi in every operation: `01` and `+1` are 1, `-1` the last.
    const cases: [string, Record<string, unknown>, string[] | 422][] = [
      ['replace 01', { op: 'replace', path: '/spec/users/01', value: 'z' }, ['a', 'z', 'c']],
      ['replace +1', { op: 'replace', path: '/spec/users/+1', value: 'z' }, ['a', 'z', 'c']],
      ['replace -1', { op: 'replace', path: '/spec/users/-1', value: 'z' }, ['a', 'b', 'z']],
      ['add 01', { op: 'add', path: '/spec/users/01', value: 'z' }, ['a', 'z', 'b', 'c']],
      ['add +1', { op: 'add', path: '/spec/users/+1', value: 'z' }, ['a', 'z', 'b', 'c']],
      ['add 03 (the end)', { op: 'add', path: '/spec/users/03', value: 'z' }, ['a', 'b', 'c', 'z']],
      ['add -', { op: 'add', path: '/spec/users/-', value: 'z' }, ['a', 'b', 'c', 'z']],
      ['remove 01', { op: 'remove', path: '/spec/users/01' }, ['a', 'c']],
      ['remove +1', { op: 'remove', path: '/spec/users/+1' }, ['a', 'c']],
      ['remove 00', { op: 'remove', path: '/spec/users/00' }, ['b', 'c']],
      ['test 01, then remove', { op: 'test', path: '/spec/users/01', value: 'b' }, ['a', 'c']],
      ['move from 02 to 0', { op: 'move', from: '/spec/users/02', path: '/spec/users/0' }, ['c', 'a', 'b']],
      ['copy from +0 to -', { op: 'copy', from: '/spec/users/+0', path: '/spec/users/-' }, 422],
      ['replace - (past the end)', { op: 'replace', path: '/spec/users/-', value: 'z' }, 422],
      ['remove 3 (past the end)', { op: 'remove', path: '/spec/users/3' }, 422],
      ['replace 1.0', { op: 'replace', path: '/spec/users/1.0', value: 'z' }, 422],
      ['replace " 1"', { op: 'replace', path: '/spec/users/ 1', value: 'z' }, 422],
    ];
    it.each(cases)('%s', async (label, op, expected) => {
      const name = `idx-${cases.findIndex((c) => c[0] === label)}`;
      await fresh(name);
      // A passing test is followed by a remove at index 1, so its effect shows.
      const ops = op.op === 'test' ? [op, { op: 'remove', path: '/spec/users/1' }] : [op];
      const { res, body } = await patch(name, jsonPatch, ops);
      if (expected === 422) {
        // copy duplicates a set member: refused by validation, not by the patch.
        expect(res.status).toBe(422);
        expect((await call(`/teams/${name}`)).body.spec?.users).toEqual(['a', 'b', 'c']);
      } else {
        expect(res.status, JSON.stringify(body)).toBe(200);
        expect(body.spec?.users).toEqual(expected);
      }
    });
  });

  describe('every response', () => {
    it('carries the Audit-Id its audit event records, and Cache-Control: no-cache, private', async () => {
      const { res } = await call('/teams', { method: 'POST', headers: json, body: JSON.stringify(teamBody('audited', ['a'])) });
      expect(res.status).toBe(201);
      const id = res.headers.get('audit-id');
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(res.headers.get('cache-control')).toBe('no-cache, private');
      const events = (await call('http://x/kubernetes/management/apis/audit.management.service/v1/events'.replace('http://x', server.base))).body as unknown as { items: { auditID: string; objectRef: { name: string } }[] };
      expect(events.items.filter((e) => e.objectRef.name === 'audited').map((e) => e.auditID)).toEqual([id]);
    });

    it('each request has its own Audit-Id, errors, unknown paths, unauthenticated requests and watches included', async () => {
      const responses = [
        await server.fetch(`${server.api}/teams`),
        await server.fetch(`${server.api}/teams`),
        await server.fetch(`${server.api}/teams/missing`),
        await server.fetch(`${server.base}/nothing/here`),
        await server.fetch(`${server.api}/teams`, { headers: { Authorization: 'Bearer wrong' } }),
        await server.fetch(`${server.base}/version`),
      ];
      const watch = await server.fetch(`${server.api}/teams?watch=true&timeoutSeconds=1`);
      responses.push(watch);
      for (const r of responses) {
        expect(r.headers.get('audit-id'), r.url).toMatch(/^[0-9a-f-]{36}$/);
        expect(r.headers.get('cache-control'), r.url).toBe('no-cache, private');
      }
      expect(new Set(responses.map((r) => r.headers.get('audit-id'))).size).toBe(responses.length);
      await Promise.all(responses.map((r) => r.body?.cancel()));
    });

    it('says Content-Type: application/json without a charset, and ends its JSON body in a newline', async () => {
      await fresh('newline');
      const answers = [
        await call('/teams/newline'),
        await call('/teams'),
        await call('/teams/missing'),
        await call(`${server.base}/nothing/here`),
        await call(`${server.base}/version`),
        await call(`${server.base}/kubernetes/management/apis`),
        await patch('newline', jsonPatch, [{ op: 'test', path: '/spec/users/0', value: 'zz' }]),
      ];
      for (const { res, text } of answers) {
        expect(res.headers.get('content-type'), res.url).toBe('application/json');
        expect(text.endsWith('}\n'), res.url).toBe(true);
        expect(Number(res.headers.get('content-length') ?? text.length), res.url).toBe(Buffer.byteLength(text));
      }
    });
  });

  it('an Apply entry of managedFields names no node for a map or a list, as structured-merge-diff writes it', async () => {
    const applied = { ...teamBody('applied', ['a', 'b']), metadata: { name: 'applied', labels: { tier: 'one' } } };
    const { res, body } = await patch('applied', applyPatch, applied, '?fieldManager=gitops');
    expect(res.status).toBe(201);
    const entry = body.metadata?.managedFields?.find((e) => e.manager === 'gitops');
    expect(entry?.operation).toBe('Apply');
    expect(entry?.fieldsV1).toEqual({ 'f:metadata': { 'f:labels': { 'f:tier': {} } }, 'f:spec': { 'f:displayName': {}, 'f:users': { 'v:"a"': {}, 'v:"b"': {} } } });
    // Applying again without the labels and one user still drops exactly those.
    const again = await patch('applied', applyPatch, teamBody('applied', ['a']), '?fieldManager=gitops');
    expect(again.res.status).toBe(200);
    expect(again.body.metadata).not.toHaveProperty('labels');
    expect(again.body.spec?.users).toEqual(['a']);
  });
});
