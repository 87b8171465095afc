/**
 * Impersonation refused and narrowed, in process (kubectl-impersonation.test.ts asks the same of a
 * served process through kubectl, which the mutation set cannot run): each Impersonate-* attribute
 * refused in kube-apiserver's words and Status details, the no-escalation refusal naming only what
 * the impersonator may read, the impersonated identity keeping its key's scope, expiry and
 * previous value, and the access reviews' answers about impersonation.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Authorizer } from '../../src/auth/authorize.js';
import type { TeamWorld } from '../../src/auth/grants.js';
import type { Identity } from '../../src/auth/identity.js';
import { impersonate } from '../../src/auth/impersonation.js';
import type { AuditEvent } from '../../src/api/audit-event.js';
import type { FederatedCredential } from '../../src/api/types.js';
import { mintFederatedKey } from '../../src/federation/mint.js';
import { mintLoginKey } from '../../src/signin/mint.js';
import { create } from '../auth/fixture.js';
import { startInProcess, type InProcess } from './in-process.js';

const teams: Record<string, Record<string, unknown>> = {
  auditors: { users: ['carla'], clusterRoles: [{ name: 'teams-viewer' }] },
  payments: { owner: { user: 'dan' } },
  eng: { groups: ['eng-leads'], clusterRoles: [{ name: 'teams-admin' }] },
  support: { users: ['sam'], clusterRoles: [{ name: 'impersonator' }, { name: 'accesskeys-admin' }, { name: 'teams-viewer' }] },
  helpdesk: { users: ['hal'], clusterRoles: [{ name: 'impersonator' }] },
};

/** Impersonates carla only, and the extra "reason" only; reads team payments only. */
const narrow = {
  rules: [
    { verbs: ['impersonate'], resources: [{ group: '', resources: ['users'], resourceNames: ['carla'] }, { group: 'authentication.k8s.io', resources: ['userextras/reason'] }] },
    { verbs: ['get'], resources: [{ group: 'management.service', resources: ['teams'], resourceNames: ['payments'] }] },
  ],
};

const keys: Record<string, Record<string, unknown>> = {
  'dan-key': { user: 'dan' },
  'sam-key': { user: 'sam' },
  'sam-ro': { user: 'sam', scope: { roles: [{ role: 'cli' }] } },
  'sam-narrow': { user: 'sam', scope: narrow },
  'sam-ttl': { user: 'sam', ttl: 3600 },
  'sam-rotated': { user: 'sam' },
  'hal-key': { user: 'hal' },
};

interface Status {
  reason?: string;
  message?: string;
  details?: unknown;
}

describe('impersonation refused and narrowed, in process', () => {
  let server: InProcess;
  const token: Record<string, string> = {};
  /** The previous value of sam-rotated, still in its overlap. */
  let previous = '';
  /** sam signed in (a Login key), and a key minted for sam's CI job by a FederatedCredential. */
  let login = { name: '', key: '' };
  let federated = '';
  const job = 'repository acme/app on refs/heads/main, workflow deploy, run 7';
  const as = async (key: string, impersonate: Record<string, string>, path = '/teams', init: RequestInit = {}) => {
    const res = await server.fetch(`${server.api}${path}`, { ...init, headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${key}`, ...impersonate } });
    return { status: res.status, body: (await res.json()) as Status };
  };
  const refusal = (who: string, target: string, what: string, group: string, why?: string) =>
    `${target} is forbidden: User "${who}" cannot impersonate resource "${what}" in API group "${group}" at the cluster scope${why ? `: ${why}` : ''}`;

  beforeAll(async () => {
    server = await startInProcess({ audit: true });
    for (const [name, spec] of Object.entries(teams)) expect((await create(server, 'teams', { metadata: { name }, spec })).status).toBe(201);
    for (const [name, spec] of Object.entries(keys)) {
      const res = await create(server, 'ownedaccesskeys', { metadata: { name }, spec });
      expect(res.status).toBe(201);
      token[name] = ((await res.json()) as { spec: { key: string } }).spec.key;
    }
    const rotated = await server.fetch(`${server.api}/ownedaccesskeys/sam-rotated/rotation`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'management.service/v1', kind: 'KeyRotation', spec: { overlapSeconds: 3600 } }),
    });
    expect(rotated.status).toBe(201);
    previous = token['sam-rotated']!;
    login = await mintLoginKey(server.registry, { username: 'sam', identity: { userId: 'u-sam', username: 'sam', groups: [], connector: 'oidc', connectorData: '{}' }, ttlSeconds: 3600, requester: { username: 'sam' }, via: 'in a test' }, new Date());
    const rule = await create(server, 'federatedcredentials', { apiVersion: 'management.service/v1', kind: 'FederatedCredential', metadata: { name: 'sam-ci' }, spec: { issuer: 'https://token.actions.githubusercontent.com', audiences: ['teamkeys'], claims: { repository: 'acme/app' }, user: 'sam' } });
    expect(rule.status, await rule.clone().text()).toBe(201);
    federated = (await mintFederatedKey(server.registry, (await rule.json()) as FederatedCredential, job, 3600, { username: `job:${job}` })).key;
  });
  afterAll(() => server.close());

  it('a user without the impersonate verb is refused the user, in kube words, with the Status details naming it', async () => {
    const res = await as(token['dan-key']!, { 'Impersonate-User': 'carla' });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ reason: 'Forbidden', message: refusal('dan', 'users "carla"', 'users', ''), details: { name: 'carla', group: '', kind: 'users' } });
  });

  it("a scope that forbids impersonating says why after the refusal", async () => {
    const res = await as(token['sam-ro']!, { 'Impersonate-User': 'carla' });
    expect(res.body.message).toBe(refusal('sam', 'users "carla"', 'users', '', "the access key's scope (role cli) allows only read requests"));
  });

  it('each attribute the scope does not allow is refused by its kind: a group, a uid, an extra (with its key as subresource)', async () => {
    const why = "the access key's scope does not allow this management request";
    const group = await as(token['sam-narrow']!, { 'Impersonate-User': 'carla', 'Impersonate-Group': 'eng-leads' });
    expect(group.body).toMatchObject({ message: refusal('sam', 'groups "eng-leads"', 'groups', '', why), details: { name: 'eng-leads', group: '', kind: 'groups' } });
    const uid = await as(token['sam-narrow']!, { 'Impersonate-User': 'carla', 'Impersonate-Uid': 'u-1' });
    expect(uid.body).toMatchObject({ message: refusal('sam', 'uids.authentication.k8s.io "u-1"', 'uids', 'authentication.k8s.io', why), details: { name: 'u-1', group: 'authentication.k8s.io', kind: 'uids' } });
    const extra = await as(token['sam-narrow']!, { 'Impersonate-User': 'carla', 'Impersonate-Extra-Reason': 'ticket-7', 'Impersonate-Extra-Other': 'x' });
    expect(extra.body.message).toBe(refusal('sam', 'userextras.authentication.k8s.io "x"', 'userextras/other', 'authentication.k8s.io', why));
    const user = await as(token['sam-narrow']!, { 'Impersonate-User': 'dan' });
    expect(user.body.message).toBe(refusal('sam', 'users "dan"', 'users', '', why));
  });

  it('impersonating someone who holds more is refused, naming what the impersonator may read and hiding the rest', async () => {
    // sam reads every team: dan's ownership of payments is named.
    const dan = await as(token['sam-key']!, { 'Impersonate-User': 'dan' });
    expect(dan.status).toBe(403);
    expect(dan.body).toMatchObject({
      message: refusal('sam', 'users "dan"', 'users', '', 'impersonating "dan" would give you "create", "update", "patch", "delete", "deletecollection" on team "payments", which you do not hold'),
      details: { name: 'dan', group: '', kind: 'users' },
    });
    // In group eng-leads carla is in two teams, one of them (which sam reads) granting teams-admin.
    const withGroup = await as(token['sam-key']!, { 'Impersonate-User': 'carla', 'Impersonate-Group': 'eng-leads' });
    expect(withGroup.body.message).toBe(refusal('sam', 'users "carla"', 'users', '', 'impersonating "carla" would give you cluster role "teams-admin", which you do not hold'));
    // hal reads no team: carla's role from auditors stays unnamed; her own keys are named.
    const hal = await as(token['hal-key']!, { 'Impersonate-User': 'carla' });
    expect(hal.body.message).toBe(refusal('hal', 'users "carla"', 'users', '', 'impersonating "carla" would give you the access keys of user "carla"; rights on teams you may not read, which you do not hold'));
  });

  it('the impersonated identity keeps the scope of the key that asked', async () => {
    expect((await as(token['sam-narrow']!, { 'Impersonate-User': 'carla' }, '/teams/payments')).status).toBe(200);
    const other = await as(token['sam-narrow']!, { 'Impersonate-User': 'carla' }, '/teams/auditors');
    expect(other.status).toBe(403);
    expect(other.body.message).toContain("the access key's scope does not allow this management request");
    // carla herself reads it.
    expect((await as(token['sam-key']!, { 'Impersonate-User': 'carla' }, '/teams/auditors')).status).toBe(200);
  });

  it('the impersonated identity keeps the expiry of the key that asked: it makes no key outliving it', async () => {
    const body = JSON.stringify({ metadata: { name: 'carla-forever' }, spec: { user: 'carla' } });
    const res = await as(token['sam-ttl']!, { 'Impersonate-User': 'carla' }, '/ownedaccesskeys', { method: 'POST', body });
    expect(res.status).toBe(403);
    expect(res.body.message).toContain('a key made or widened by a key that expires must expire no later');
  });

  it("the impersonated identity keeps the key's previous value: it writes no key", async () => {
    const body = JSON.stringify({ metadata: { name: 'carla-by-previous' }, spec: { user: 'carla' } });
    const res = await as(previous, { 'Impersonate-User': 'carla' }, '/ownedaccesskeys', { method: 'POST', body });
    expect(res.status).toBe(403);
    expect(res.body.message).toContain("this access key's previous value (rotated at ");
    expect(res.body.message).toContain('may not write access keys');
  });

  it('a key made while impersonating with a Login key is tied to that sign-in, as one made by the user signed in is', async () => {
    const body = JSON.stringify({ metadata: { name: 'carla-by-login' }, spec: { user: 'carla', ttl: 600 } });
    const res = await server.fetch(`${server.api}/ownedaccesskeys`, { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${login.key}`, 'Impersonate-User': 'carla' }, body });
    expect(res.status, await res.clone().text()).toBe(201);
    const refs = ((await res.json()) as { metadata: { ownerReferences?: { kind: string; name: string }[] } }).metadata.ownerReferences ?? [];
    expect(refs.map((r) => `${r.kind}/${r.name}`)).toEqual([`OwnedAccessKey/${login.name}`]);
  });

  it("a write made while impersonating with a CI job's key is audited with the job, as the impersonator's", async () => {
    const body = JSON.stringify({ metadata: { name: 'carla-by-ci' }, spec: { user: 'carla', ttl: 600 } });
    const res = await server.fetch(`${server.api}/ownedaccesskeys`, { method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${federated}`, 'Impersonate-User': 'carla' }, body });
    expect(res.status, await res.clone().text()).toBe(201);
    const events = await server.fetch(`${server.base}/kubernetes/management/apis/audit.management.service/v1/events?resource=ownedaccesskeys&name=carla-by-ci`);
    const [event] = ((await events.json()) as { items: AuditEvent[] }).items;
    expect(event!.user.username).toBe('sam');
    expect(Object.values(event!.user.extra ?? {})).toEqual([[job]]);
    expect(event!.impersonatedUser).toMatchObject({ username: 'carla' });
  });

  it('a rules review lists the impersonate rules held, one per API group; none for a user without them', async () => {
    const review = async (key: string) => {
      const res = await server.fetch(`${server.base}/kubernetes/management/apis/authorization.k8s.io/v1/selfsubjectrulesreviews`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${key}` },
        body: JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: {} }),
      });
      expect(res.status).toBe(201);
      const rules = ((await res.json()) as { status: { resourceRules: { verbs: string[]; apiGroups: string[]; resources: string[] }[] } }).status.resourceRules;
      return rules.filter((r) => r.verbs.includes('impersonate'));
    };
    expect(await review(token['sam-key']!)).toEqual([
      { verbs: ['impersonate'], apiGroups: [''], resources: ['users', 'groups'] },
      { verbs: ['impersonate'], apiGroups: ['authentication.k8s.io'], resources: ['uids', 'userextras'] },
    ]);
    expect(await review(token['dan-key']!)).toEqual([]);
  });

  it('an access review about impersonation is answered by the impersonate rights, in the group of each kind', async () => {
    const ask = async (key: string, attrs: Record<string, string>) => {
      const res = await server.fetch(`${server.base}/kubernetes/management/apis/authorization.k8s.io/v1/selfsubjectaccessreviews`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${key}` },
        body: JSON.stringify({ apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec: { resourceAttributes: attrs } }),
      });
      expect(res.status).toBe(201);
      const { allowed, reason } = ((await res.json()) as { status: { allowed: boolean; reason?: string } }).status;
      return reason ? { allowed, reason } : { allowed };
    };
    expect(await ask(token['sam-key']!, { verb: 'impersonate', group: '', resource: 'users' })).toEqual({ allowed: true });
    expect(await ask(token['sam-key']!, { verb: '*', group: '', resource: 'groups' })).toEqual({ allowed: true });
    expect(await ask(token['dan-key']!, { verb: 'impersonate', group: '', resource: 'users' })).toEqual({ allowed: false });
    // Not impersonation: users in another group, or another verb on them.
    expect((await ask(token['sam-key']!, { verb: 'impersonate', group: 'authentication.k8s.io', resource: 'users' })).allowed).toBe(false);
    expect((await ask(token['sam-key']!, { verb: 'get', group: '', resource: 'users' })).allowed).toBe(false);
    // The name and the subresource asked reach the scope.
    expect(await ask(token['sam-narrow']!, { verb: 'impersonate', group: '', resource: 'users', name: 'carla' })).toEqual({ allowed: true });
    expect((await ask(token['sam-narrow']!, { verb: 'impersonate', group: '', resource: 'users', name: 'dan' })).allowed).toBe(false);
    expect(await ask(token['sam-narrow']!, { verb: 'impersonate', group: 'authentication.k8s.io', resource: 'userextras', subresource: 'reason' })).toEqual({ allowed: true });
    expect((await ask(token['sam-narrow']!, { verb: 'impersonate', group: 'authentication.k8s.io', resource: 'userextras', subresource: 'other' })).allowed).toBe(false);
  });

  it('an identity already acting for someone else does not impersonate again (400), before any right is looked at', () => {
    const carla: Identity = { name: 'carla', user: 'carla', groups: [], teams: [], clusterRoles: new Set(), keyName: 'sam-key', impersonation: { by: { name: 'sam', keyName: 'sam-key', groups: [] } } };
    // Neither the authorizer nor the teams are consulted: none is given.
    expect(() => impersonate(carla, { user: 'dan', groups: [], extra: {} }, undefined as unknown as Authorizer, undefined as unknown as TeamWorld)).toThrow(
      expect.objectContaining({ code: 400, message: 'a request may impersonate only once' }),
    );
  });
});
