/**
 * Issue 24, bounded work per request, generated: every parser the server runs on request input
 * (JSON, YAML with anchors and aliases, Kubernetes protobuf, JSON and merge patches, label and
 * field selectors, integer query parameters, DeleteOptions) is fed generated input over real HTTP,
 * while the server's event loop is watched (loop-probe.mjs). No request may hold the loop more
 * than holdBoundMs (loop-hold.ts: ten times a quiet machine's heaviest request), and none may answer 5xx (but kube's 504 for a resourceVersion from the future).
 * Counterexamples found here are kept by name in
 * bounded-work.test.ts.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Served } from './serve-process.js';
import { holdBoundMs, send, startProbedServe, steadyHold } from './loop-hold.js';

const v1 = '/kubernetes/management/apis/management.service/v1';
const ssar = '/kubernetes/management/apis/authorization.k8s.io/v1/selfsubjectaccessreviews';
const boundMs = holdBoundMs;
/** Generous for a 3 MiB YAML body decoded in the worker on a loaded machine; the old quadratic parsers took minutes. */
const answerMs = 20_000;

interface Case {
  method: string;
  path: string;
  type?: string;
  body?: Buffer;
}

/** A case prints as its request line and the size and start of its body, not every byte. */
const printable = (c: Case): Case & { [fc.toStringMethod]: () => string } => ({
  ...c,
  [fc.toStringMethod]: () => `${c.method} ${c.path.slice(0, 200)} ${c.type ?? ''} <${c.body?.length ?? 0} bytes: ${JSON.stringify(c.body?.subarray(0, 80).toString('latin1') ?? '')}>`,
});

const prototypeNames = ['__proto__', 'constructor', 'prototype', 'valueOf', 'hasOwnProperty', 'toString', 'isPrototypeOf', '__defineGetter__'];
const word = fc.oneof(fc.constantFrom(...prototypeNames, 'metadata.name', 'metadata.namespace', 'app', 'spec.users'), fc.string({ maxLength: 12 }));
const bigNumber = fc.oneof(
  fc.constantFrom('999999999999999', '9007199254740993', '99999999999999999999', '1e300', '-1', '0', '1.5', '0x10', ' 1', '1e3', 'Infinity', 'NaN'),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
);

const selectorQuery = fc
  .tuple(fc.constantFrom('labelSelector', 'fieldSelector'), fc.array(fc.tuple(word, fc.constantFrom('=', '==', '!=', ' in ', ' notin ', ''), word), { minLength: 1, maxLength: 4 }), fc.boolean())
  .map(([name, reqs, negate]) => {
    const text = reqs.map(([k, op, v]) => (op.trim() === 'in' || op.trim() === 'notin' ? `${k}${op}(${v})` : op ? `${k}${op}${v}` : `${negate ? '!' : ''}${k}`)).join(',');
    return { method: 'GET', path: `${v1}/teams?${name}=${encodeURIComponent(text)}` };
  });
const numberQuery = fc
  .tuple(fc.constantFrom('limit', 'timeoutSeconds', 'resourceVersion', 'gracePeriodSeconds'), bigNumber, fc.boolean())
  .map(([name, value, watch]) =>
    name === 'gracePeriodSeconds'
      ? { method: 'DELETE', path: `${v1}/teams/fuzz-absent?gracePeriodSeconds=${encodeURIComponent(value)}` }
      : { method: 'GET', path: `${v1}/teams?${name}=${encodeURIComponent(value)}${watch ? '&watch=true&timeoutSeconds=1' : ''}` },
  );
const deleteBody = bigNumber.map((n) => ({ method: 'DELETE', path: `${v1}/teams/fuzz-absent`, type: 'application/json', body: Buffer.from(`{"gracePeriodSeconds": ${n}}`) }));

/**
 * A size from min to max. fast-check starts with small values, and a run cut short by its time
 * limit might never reach large ones: the ends of the range and its middle come as often.
 */
const sized = (min: number, max: number) => fc.oneof(fc.constantFrom(min, max, Math.floor(Math.sqrt(min * max) || max / 100)), fc.integer({ min, max }));

const json = fc.jsonValue({ maxDepth: 6 }).map((v) => Buffer.from(JSON.stringify(v) ?? 'null'));
const manifest = fc
  .record({ name: fc.constantFrom('fuzz', 'fuzz-2'), users: fc.array(fc.string({ maxLength: 30 }), { maxLength: 1200 }), description: fc.string({ maxLength: 5000 }), extra: fc.dictionary(word, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 20 }) })
  .map(({ name, users, description, extra }) => Buffer.from(JSON.stringify({ ...extra, metadata: { name }, spec: { users, description } })));
/** Flow sequences or maps nested `depth` deep, as JSON or YAML text. */
const deep = fc.tuple(sized(50, 1_000_000), fc.constantFrom('[', '{"a":', '{a: ')).map(([wanted, open]) => {
  const close = open === '[' ? ']' : '}';
  // Under the body limit of 3 MiB.
  const depth = Math.min(wanted, Math.floor((3 * 1024 * 1024 - 1) / (open.length + 1)));
  return Buffer.from(`${open.repeat(depth)}${open === '[' ? '' : '1'}${close.repeat(depth)}`);
});
/** One anchor and many aliases of it, the anchored value itself of any size. */
const aliases = fc.tuple(sized(1, 5000), sized(0, 300), fc.boolean()).map(([items, count, nested]) => {
  const users = Array.from({ length: items }, (_, i) => `u${i}`).join(', ');
  const lines = ['metadata: {name: fuzz-alias}', 'spec:', '  access:', `  - &r {verbs: [get], users: [${users}]}`];
  for (let i = 0; i < count; i++) lines.push(nested ? `  - {verbs: [list], users: [*r, *r]}` : '  - *r');
  return Buffer.from(lines.join('\n'));
});
/** A mapping of many keys, perhaps one repeated, perhaps under a %YAML 1.1 directive. */
const manyKeys = fc.tuple(sized(1, 10_000), fc.boolean(), fc.boolean()).map(([n, repeat, old]) => {
  const keys = Array.from({ length: n }, (_, i) => `k${i}: v`);
  if (repeat) keys.push('k0: again');
  return Buffer.from(`${old ? '%YAML 1.1\n---\n' : ''}metadata: {name: fuzz-keys}\n${keys.join('\n')}\n`);
});
const yamlBody = fc.oneof(aliases, manyKeys, deep, json, fc.string({ maxLength: 300 }).map((s) => Buffer.from(s)));
const yamlCase = fc.tuple(yamlBody, fc.constantFrom('POST', 'PATCH')).map(([body, method]) =>
  method === 'POST' ? { method, path: `${v1}/teams?dryRun=All`, type: 'application/yaml', body } : { method, path: `${v1}/teams/fuzz?fieldManager=fuzz&dryRun=All`, type: 'application/apply-patch+yaml', body },
);
const jsonCase = fc.tuple(fc.oneof(json, manifest, deep), fc.constantFrom('POST', 'PUT', 'PATCH')).map(([body, method]) => ({
  method,
  path: method === 'POST' ? `${v1}/teams?dryRun=All` : `${v1}/teams/fuzz?dryRun=All`,
  type: method === 'PATCH' ? 'application/merge-patch+json' : 'application/json',
  body,
}));
const jsonPatch = fc
  .array(fc.record({ op: fc.constantFrom('add', 'copy', 'move', 'test', 'replace', 'remove'), from: fc.constantFrom('', '/spec', '/spec/users', '/metadata'), path: fc.constantFrom('/spec/x', '/spec/users/-', '/metadata/annotations', '/spec/users/0'), value: fc.jsonValue({ maxDepth: 3 }) }), { maxLength: 60 })
  .map((ops) => ({ method: 'PATCH', path: `${v1}/teams/fuzz?dryRun=All`, type: 'application/json-patch+json', body: Buffer.from(JSON.stringify(ops)) }));
/** Protobuf envelopes: a field repeated many times, random bytes, or a review with random strings. */
const protobuf = fc
  .oneof(
    fc.tuple(fc.constantFrom(0x0a, 0x12, 0x1a, 0x08, 0x22), fc.integer({ min: 0, max: 3 }), sized(1, 500_000)).map(([tag, len, times]) => Buffer.alloc(times * (2 + len), Buffer.from([tag, len, ...Array<number>(len).fill(0x41)]))),
    fc.uint8Array({ maxLength: 400 }).map((a) => Buffer.from(a)),
    fc.tuple(fc.string({ maxLength: 50 }), fc.string({ maxLength: 50 })).map(([verb, resource]) => {
      const field = (n: number, b: Buffer) => Buffer.concat([Buffer.from([(n << 3) | 2]), Buffer.from([b.length]), b]);
      const attrs = Buffer.concat([field(2, Buffer.from(verb).subarray(0, 100)), field(5, Buffer.from(resource).subarray(0, 100))]);
      const typeMeta = Buffer.concat([field(1, Buffer.from('authorization.k8s.io/v1')), field(2, Buffer.from('SelfSubjectAccessReview'))]);
      return Buffer.concat([field(1, typeMeta), field(2, field(2, field(1, attrs)))]);
    }),
  )
  .map((payload) => ({ method: 'POST', path: ssar, type: 'application/vnd.kubernetes.protobuf', body: Buffer.concat([Buffer.from('k8s\0', 'latin1'), payload]) }));

describe('every parser, generated input, over HTTP', () => {
  let served: Served;
  let base: string;
  const auth = () => ({ Authorization: `Bearer ${served.adminKey}` });

  beforeAll(async () => {
    served = await startProbedServe();
    base = new URL(served.url).origin;
    const team = Buffer.from(JSON.stringify({ metadata: { name: 'fuzz', labels: { app: 'fuzz' } }, spec: { users: ['ana'] } }));
    expect((await send(base, 'POST', `${v1}/teams`, { ...auth(), 'Content-Type': 'application/json' }, team)).status).toBe(201);
  }, 60_000);
  afterAll(async () => {
    await served?.stop();
  });

  it('holds the event loop within the bound per request and never answers 5xx', async () => {
    const seen = new Map<number, number>();
    let tried = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(selectorQuery, numberQuery, deleteBody, yamlCase, jsonCase, jsonPatch, protobuf).map(printable),
        async (c) => {
          tried++;
          const headers = { ...auth(), ...(c.type ? { 'Content-Type': c.type } : {}) };
          // A request still unanswered after answerMs fails here, not silently at the run's time limit.
          let timer: NodeJS.Timeout | undefined;
          const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${answerMs} ms`)), answerMs)));
          const { result, holdMs } = await Promise.race([steadyHold(served, () => send(base, c.method, c.path, headers, c.body), boundMs), late]).finally(() => clearTimeout(timer));
          seen.set(result.status, (seen.get(result.status) ?? 0) + 1);
          // The one 5xx a client may cause is kube's 504 for a resourceVersion from the future.
          const text = result.body.toString('utf8');
          if (result.status === 504) expect(text).toMatch(/"reason":"Timeout".*Too large resource version/);
          else expect(result.status, text.slice(0, 300)).toBeLessThan(500);
          expect(holdMs, 'event loop held (ms)').toBeLessThanOrEqual(boundMs);
        },
      ),
      { numRuns: 300, interruptAfterTimeLimit: 60_000 },
    );
    expect(tried, 'cases run within the time limit').toBeGreaterThan(50);
    // The inputs reached past parsing: successes, refusals, and 413s for what decodes too large.
    for (const code of [200, 201, 400]) expect(seen.get(code) ?? 0, `answers ${code} (${JSON.stringify([...seen])})`).toBeGreaterThan(0);
    expect(served.stderr()).not.toMatch(/"level":50/);
  }, 180_000);
});
