/**
 * Kept from a review (stop 64), which found it holding: after a rotation with an overlap, no read
 * form (GET, LIST, YAML, Table, metadata-only, watch from 0 and from an old resourceVersion, audit,
 * teams/X/accesskeys) carries a key value or its SHA-256 (current or previous, hex or base64). A
 * reader who may update a team's keys but not hold its membership reads these too.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcess, type InProcess } from '../support/in-process.js';

const json = { 'Content-Type': 'application/json' };
const rayKey = `RayKey${'r'.repeat(50)}`;

describe('values and hashes in every read form', () => {
  let server: InProcess;
  const url = (p: string) => `${server.api}/${p}`;
  const needles: string[] = [];
  const addValue = (v: string) => {
    needles.push(v, createHash('sha256').update(v).digest('hex'), createHash('sha256').update(v).digest('base64'), createHash('sha256').update(v).digest('base64url'));
  };
  let firstRv = '';

  beforeAll(async () => {
    server = await startInProcess({ audit: true });
    const post = async (p: string, body: unknown) => {
      const res = await server.fetch(url(p), { method: 'POST', headers: json, body: JSON.stringify(body) });
      expect(res.status, await res.clone().text()).toBe(201);
      return (await res.json()) as { spec: { key: string }; metadata: { resourceVersion: string } };
    };
    await post('teams', { metadata: { name: 'ops' }, spec: { users: ['sam'] } });
    await post('teams', { metadata: { name: 'ray-can-update-ops-keys' }, spec: { owner: { user: 'ray' } } });
    // ray may update team ops (so read its keys) through an access rule, without membership.
    await server.fetch(url('teams/ops'), { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ spec: { access: [{ verbs: ['get', 'update'], users: ['ray'] }] } }) });
    await post('ownedaccesskeys', { metadata: { name: 'ray' }, spec: { user: 'ray', key: rayKey } });
    const made = await post('ownedaccesskeys', { metadata: { name: 'ops-ci', annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"spec":{"team":"ops"}}' } }, spec: { team: 'ops' } });
    firstRv = made.metadata.resourceVersion;
    addValue(made.spec.key);
    const rotated = await post('ownedaccesskeys/ops-ci/rotation', { apiVersion: 'management.service/v1', kind: 'KeyRotation', spec: { overlapSeconds: 3600, idempotencyKey: 'rot-1' } });
    addValue(rotated.spec.key);
    const rotated2 = await post('ownedaccesskeys/ops-ci/rotation', { apiVersion: 'management.service/v1', kind: 'KeyRotation', spec: { overlapSeconds: 3600, awaitConfirmation: true } });
    addValue(rotated2.spec.key);
    // A dry-run rotation's value was never stored; not a needle.
  });
  afterAll(() => server?.close());

  const read = async (p: string, accept?: string, key = rayKey) => {
    const res = await fetch(url(p), { headers: { Authorization: `Bearer ${key}`, ...(accept ? { Accept: accept } : {}) } });
    return { status: res.status, text: await res.text() };
  };

  it('no form carries a value or hash', async () => {
    const forms: [string, string | undefined][] = [
      ['ownedaccesskeys/ops-ci', undefined],
      ['ownedaccesskeys/ops-ci', 'application/yaml'],
      ['ownedaccesskeys/ops-ci', 'application/json;as=Table;v=v1;g=meta.k8s.io'],
      ['ownedaccesskeys/ops-ci', 'application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io'],
      ['ownedaccesskeys/ops-ci/status', undefined],
      ['ownedaccesskeys', undefined],
      ['ownedaccesskeys?limit=1', 'application/yaml'],
      [`ownedaccesskeys?resourceVersion=${firstRv}&resourceVersionMatch=Exact`, undefined],
    ];
    for (const [p, accept] of forms) {
      const res = await read(p, accept);
      expect(res.status, `${p} ${res.text.slice(0, 200)}`).toBe(200);
      for (const n of needles) expect(res.text.includes(n), `${p} (${accept}) holds ${n}`).toBe(false);
    }
    // As the administrator too, and the audit trail.
    for (const p of ['ownedaccesskeys/ops-ci', 'teams/ops/accesskeys', '../../audit.management.service/v1/events?limit=5000']) {
      const res = await server.fetch(url(p));
      const text = await res.text();
      expect(res.status, text.slice(0, 200)).toBe(200);
      for (const n of needles) expect(text.includes(n), `${p} holds ${n}`).toBe(false);
    }
  });

  it('a watch from 0 and from the first revision carries none either', async () => {
    for (const q of ['watch=true', `watch=true&resourceVersion=${Number(firstRv) - 1}`]) {
      const ctl = new AbortController();
      const res = await fetch(url(`ownedaccesskeys?${q}&timeoutSeconds=1`), { headers: { Authorization: `Bearer ${rayKey}` }, signal: ctl.signal });
      const text = await res.text();
      expect(text).toContain('ops-ci');
      for (const n of needles) expect(text.includes(n), `${q} holds ${n}`).toBe(false);
    }
  });
});
