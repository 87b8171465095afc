/**
 * Grants the authorization tests of the mutation set did not reach: an access rule's subresources
 * (listed, `*`, another one, or none), a rule naming no verb of this API among others, an approver reading the
 * status of a request of their own, and the administrator's role on AccessRequests, and the verbs a subresource serves.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcess } from '../server/in-process.js';
import { create } from './fixture.js';

const keyOf = (who: string) => `${who[0]!.toUpperCase()}${who.slice(1)}Key${'k'.repeat(40)}`;

describe('access rules on subresources, and AccessRequest grants', () => {
  let server: InProcess;
  let request = '';
  const get = async (who: string, path: string) => {
    const res = await server.fetch(`${server.api}/${path}`, { headers: { Authorization: `Bearer ${keyOf(who)}` } });
    return { status: res.status, message: ((await res.json()) as { message?: string }).message };
  };

  beforeAll(async () => {
    server = await startInProcess();
    const svc = {
      accessRequests: { approvers: ['apo'] },
      access: [
        // Names no verb this API serves: it grants nothing, and the rules after it still count.
        { name: 'elsewhere', verbs: ['escalate'], users: ['una'] },
        { name: 'status-readers', verbs: ['get'], subresources: ['status'], users: ['una'] },
        { name: 'object-readers', verbs: ['get'], users: ['ned'] },
        { name: 'every-subresource', verbs: ['get'], subresources: ['*'], users: ['wes'] },
        { name: 'key-lists', verbs: ['get'], subresources: ['accesskeys'], users: ['ace'] },
      ],
    };
    const made = await create(server, 'teams', { metadata: { name: 'svc' }, spec: svc });
    expect(made.status, await made.clone().text()).toBe(201);
    for (const who of ['una', 'ned', 'wes', 'ace', 'apo']) expect((await create(server, 'ownedaccesskeys', { metadata: { name: `${who}-key` }, spec: { user: who, key: keyOf(who) } })).status).toBe(201);
    const asked = await create(server, 'accessrequests', { apiVersion: 'management.service/v1', kind: 'AccessRequest', metadata: { generateName: 'req-' }, spec: { team: 'svc', reason: 'on call' } }, keyOf('apo'));
    expect(asked.status, await asked.clone().text()).toBe(201);
    request = ((await asked.json()) as { metadata: { name: string } }).metadata.name;
  });
  afterAll(() => server.close());

  it('a rule with subresources grants on those (or, with "*", on every one); a rule without grants on the object only', async () => {
    expect({
      unaStatus: (await get('una', 'teams/svc/status')).status,
      nedStatus: (await get('ned', 'teams/svc/status')).status,
      nedObject: (await get('ned', 'teams/svc')).status,
      wesStatus: (await get('wes', 'teams/svc/status')).status,
      aceStatus: (await get('ace', 'teams/svc/status')).status,
    }).toEqual({ unaStatus: 200, nedStatus: 403, nedObject: 200, wesStatus: 200, aceStatus: 403 });
    expect((await get('ned', 'teams/svc/status')).message).toBe('teams.management.service "svc" is forbidden: User "ned" cannot get resource "teams/status" in API group "management.service" at the cluster scope');
  });

  it('a rule naming no verb of this API does not end the search: the next rule naming the user grants', async () => {
    expect((await get('una', 'teams/svc')).status).toBe(200);
  });

  it('an approver reads the status of a request of their own', async () => {
    expect((await get('apo', `accessrequests/${request}/status`)).status).toBe(200);
  });

  it("the administrator reads any AccessRequest's status through its role", async () => {
    const res = await server.fetch(`${server.api}/accessrequests/${request}/status`);
    expect(res.status).toBe(200);
  });

  it('an access review of a verb a subresource does not serve says so', async () => {
    const res = await server.fetch(`${server.base}/kubernetes/management/apis/authorization.k8s.io/v1/selfsubjectaccessreviews`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: { verb: 'get', group: 'management.service', resource: 'ownedaccesskeys', subresource: 'rotation', name: 'una-key' } } }),
    });
    expect(((await res.json()) as { status: unknown }).status).toEqual({ allowed: false, reason: 'ownedaccesskeys/rotation does not serve get' });
  });
});
