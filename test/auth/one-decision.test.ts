/**
 * One decision, three askers: in random worlds (test/auth/model), for a random sample of
 * (key, verb, resource, name, subresource), the real request's allow/deny is authorize()'s, and so
 * is the access review's (kubectl auth can-i). Writes are sent with dryRun, so the world stays as it
 * was drawn. A refusal by authorize() is the request's 403, word for word; a request authorize()
 * allows may still be refused by admission (escalation, quota, what the write reaches), but only
 * with a reason after the 403's colon.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/api/types.js';
import { allows, authorize, forbiddenBy, type ResourceAttributes } from '../../src/auth/decision.js';
import type { Identity } from '../../src/auth/identity.js';
import type { Verb } from '../../src/auth/roles.js';
import { AccessAdvisor } from '../../src/server/auth/access.js';
import { seed, startModel, type Model } from './model/harness.js';
import { teamNames, world } from './model/world.js';

const merge = 'application/merge-patch+json';
const group = 'management.service';
type Resource = 'teams' | 'ownedaccesskeys';

/** What is asked: a verb on a collection (no name) or on one object, maybe its status. */
const probe = fc.record({
  key: fc.nat(9),
  resource: fc.constantFrom<Resource>('teams', 'ownedaccesskeys'),
  pick: fc.nat(9),
  ask: fc.constantFrom(
    { verb: 'get' as Verb },
    { verb: 'get' as Verb, subresource: 'status' },
    { verb: 'list' as Verb, collection: true },
    { verb: 'update' as Verb },
    { verb: 'patch' as Verb },
    { verb: 'patch' as Verb, subresource: 'status' },
    { verb: 'delete' as Verb },
    { verb: 'deletecollection' as Verb, collection: true },
  ),
});
type Probe = typeof probe extends fc.Arbitrary<infer P> ? P : never;

/** The request a probe stands for, as the server's routes take it (writes in dryRun). */
function request(p: Probe, name: string | undefined, obj: KubeObject | undefined): [string, string, unknown, string?] {
  const at = `/${p.resource}${name ? `/${name}` : ''}${p.ask.subresource ? `/${p.ask.subresource}` : ''}`;
  switch (p.ask.verb) {
    case 'update':
      return ['PUT', `${at}?dryRun=All`, obj];
    case 'patch':
      return ['PATCH', `${at}?dryRun=All`, {}, merge];
    case 'delete':
    case 'deletecollection':
      return ['DELETE', `${at}?dryRun=All`, undefined];
    default:
      return ['GET', at, undefined];
  }
}

async function agree(m: Model, p: Probe): Promise<void> {
  const keyNames = [...m.values.keys()];
  const keyName = keyNames[p.key % keyNames.length]!;
  const who: Identity | undefined = await m.auth.authenticator.authenticate(`Bearer ${m.values.get(keyName)}`).catch(() => undefined);
  if (!who) return; // refused by authentication: no authorization to compare
  const registry = m.registry.byPlural(p.resource)!;
  const names = p.resource === 'teams' ? [...teamNames, 'ghost'] : [...keyNames.filter((n) => n !== 'admin'), 'ghost-key'];
  const name = p.ask.collection ? undefined : names[p.pick % names.length]!;
  const stored = name ? await registry.get(name).catch(() => undefined) : undefined;
  // An update is sent (and judged) only on an object that exists: a PUT of a missing one creates.
  if (p.ask.verb === 'update' && !stored) return;
  const object = name ? (stored ?? { apiVersion: `${group}/v1`, kind: registry.info.kind, metadata: { name } }) : undefined;
  const attrs: ResourceAttributes = { user: who, verb: p.ask.verb, resource: p.resource, ...(name ? { name } : {}), ...(p.ask.subresource ? { subresource: p.ask.subresource } : {}), ...(object ? { object } : {}) };
  const decision = authorize(m.auth.authorizer, attrs);
  const what = `${keyName} ${p.ask.verb} ${p.resource}${p.ask.subresource ? `/${p.ask.subresource}` : ''} ${name ?? '*'}`;

  const review = await new AccessAdvisor(m.auth.authorizer, m.registry).decide(who, { verb: p.ask.verb, group, resource: p.resource, ...(name ? { name } : {}), ...(p.ask.subresource ? { subresource: p.ask.subresource } : {}) });
  expect(review.allowed, `can-i ${what}`).toBe(allows(decision));
  expect(review.reason, `can-i ${what}: reason`).toBe(decision.reason);

  const [method, path, body, type] = request(p, name, stored);
  const res = await m.request(method, path, body, m.values.get(keyName)!, type);
  const plain = forbiddenBy(m.auth.authorizer, attrs, decision).message;
  if (!allows(decision)) {
    expect(res.status, `${what}: the request is refused`).toBe(403);
    expect(res.body.message, `${what}: in the words of the decision`).toBe(plain);
  } else if (res.status === 403) {
    // Admission's refusal, after authorization allowed: always with its reason.
    expect(res.body.message, `${what}: refused by admission, with a reason`).not.toBe(forbiddenBy(m.auth.authorizer, attrs, {}).message);
  }
}

describe('the request path, authorize() and the access review decide alike', () => {
  it('for random (key, verb, resource, name, subresource) in random worlds', async () => {
    let runs = 0;
    // Bounded in time by skipping the runs past the deadline (a run is never cut short, so a loaded
    // machine plays fewer worlds instead of failing).
    const deadline = Date.now() + Number(process.env.ONE_DECISION_MS ?? 4000);
    await fc.assert(
      fc.asyncProperty(world, fc.array(probe, { minLength: 20, maxLength: 30 }), async (w, probes) => {
        if (runs > 0 && Date.now() > deadline) return;
        runs++;
        const m = await startModel();
        try {
          await seed(m, w.teams, w.keys);
          for (const p of probes) await agree(m, p);
        } finally {
          await m.close();
        }
      }),
      { numRuns: Number(process.env.ONE_DECISION_RUNS ?? 20), ...(process.env.ONE_DECISION_SEED ? { seed: Number(process.env.ONE_DECISION_SEED) } : {}) },
    );
    expect(runs).toBeGreaterThanOrEqual(1);
  }, 60_000);
});
