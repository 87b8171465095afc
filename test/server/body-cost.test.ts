/**
 * Issue 33, "decoding cannot be jammed": a caller who has the verb gets at most 100 ms of the
 * event loop for any body under the 3 MiB limit. Measured as the CPU time of this process (the
 * in-process server and the small raw client) around one request, so a loaded machine's waits for
 * a CPU do not count; the smallest of a few tries counts, as CPU time stretches on a shared
 * machine too. Each body is the worst of its shape found by profiling (docs/api.md, bounds).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminKey, startInProcess, type InProcess } from '../support/in-process.js';
import { send } from './raw-http.js';

const boundMs = 100;
let server: InProcess;
let path: string;

beforeAll(async () => {
  server = await startInProcess();
  path = new URL(`${server.api}/teams?dryRun=All`).pathname + '?dryRun=All';
  // Warm the code paths once, so the first measured body does not pay for compiling them.
  await post({ metadata: { name: 'warm', labels: { a: 'b' } }, spec: { users: ['ana'], access: [{ verbs: ['get'] }] } });
});
afterAll(async () => {
  await server?.close();
});

async function post(body: unknown) {
  return sendText(Buffer.from(JSON.stringify(body)));
}

function sendText(text: Buffer, method = 'POST', to = path, type = 'application/json') {
  const headers = { Authorization: `Bearer ${adminKey}`, 'Content-Type': type };
  return send(server.base, method, to, headers, text, 30_000);
}

/**
 * Sends the body up to five times while it takes more than the bound; the least CPU time counts.
 * Three were not always enough on a loaded machine: a full suite run with another compile beside it
 * measured the 2.8 MB body at 104 ms three times running, 30-33 ms alone.
 */
async function cpuOf(body: unknown, ...to: [method?: string, path?: string, type?: string]) {
  const text = Buffer.from(JSON.stringify(body));
  expect(text.length).toBeLessThanOrEqual(3 * 1024 * 1024);
  let best = Infinity;
  let answer: Awaited<ReturnType<typeof post>> | undefined;
  for (let i = 0; i < 5 && best > boundMs; i++) {
    const before = process.cpuUsage();
    answer = await sendText(text, ...to);
    const used = process.cpuUsage(before);
    best = Math.min(best, (used.user + used.system) / 1000);
  }
  return { ms: best, status: answer!.status, body: JSON.parse(answer!.body.toString('utf8')) as { message?: string; reason?: string } };
}

const entries = (n: number, entry: (i: number) => [string, string]) => Object.fromEntries(Array.from({ length: n }, (_, i) => entry(i)));
const label = (i: number): [string, string] => [`example.com/k${i}`.padEnd(60, 'k'), `v${i}`.padEnd(63, 'v')];

describe('work per request is bounded for a caller who has the verb', () => {
  it('2,000 valid labels of the longest kind are accepted within the bound', async () => {
    const a = await cpuOf({ metadata: { name: 'labels', labels: entries(2_000, label) }, spec: {} });
    expect(a.status).toBe(201);
    expect(a.ms).toBeLessThanOrEqual(boundMs);
  });

  it('150,000 valid labels (2.8 MB) are 413, refused before the work that grows with them (held 3 s before)', async () => {
    const a = await cpuOf({ metadata: { name: 'labels', labels: entries(150_000, (i) => [`k${i}`, `v${i}`]) }, spec: {} });
    expect(a.status).toBe(413);
    expect(a.body).toMatchObject({ reason: 'RequestEntityTooLarge', message: expect.stringMatching(/^Request entity too large: the request body holds 150\d{3} fields and list items, more than the 2048 a write may hold$/) });
    expect(a.ms).toBeLessThanOrEqual(boundMs);
  });

  it('256 KiB of annotations in 40,000 short keys are 413 within the bound (held 700 ms before)', async () => {
    const a = await cpuOf({ metadata: { name: 'notes', annotations: entries(40_000, (i) => [`a${i}`, '']) }, spec: {} });
    expect(a.status).toBe(413);
    expect(a.body.reason).toBe('RequestEntityTooLarge');
    expect(a.ms).toBeLessThanOrEqual(boundMs);
  });

  it('annotations just under 256 KiB are accepted within the bound: 2,000 of them, or one long value', async () => {
    const many = await cpuOf({ metadata: { name: 'notes', annotations: entries(2_000, (i) => [`example.com/a${i}`, 'x'.repeat(110)]) }, spec: {} });
    expect(many.status).toBe(201);
    expect(many.ms).toBeLessThanOrEqual(boundMs);
    const one = await cpuOf({ metadata: { name: 'note', annotations: { big: 'x'.repeat(256 * 1024 - 10) } }, spec: {} });
    expect(one.status).toBe(201);
    expect(one.ms).toBeLessThanOrEqual(boundMs);
  });

  it('256 access rules of long unknown verbs get their warnings within the bound (the "did you mean" search took seconds)', async () => {
    const access = Array.from({ length: 256 }, (_, i) => ({ verbs: Array.from({ length: 5 }, (_, j) => `${'updat'.padEnd(240, 'e')}${i}-${j}`) }));
    const a = await cpuOf({ metadata: { name: 'rules' }, spec: { access } });
    expect(a.status).toBe(201);
    expect(a.ms).toBeLessThanOrEqual(boundMs);
  });

  it('150,000 unknown fields (1.7 MB) are 413 within the bound', async () => {
    const a = await cpuOf({ ...entries(150_000, (i) => [`f${i}`, '1']), metadata: { name: 'unknown' } });
    expect(a.status).toBe(413);
    expect(a.ms).toBeLessThanOrEqual(boundMs);
  });

  it('1,000 users of 1024 characters (1 MB) and nesting 95 levels deep are accepted within the bound', async () => {
    const users = await cpuOf({ metadata: { name: 'crowd' }, spec: { users: Array.from({ length: 1000 }, (_, i) => `u${i}`.padEnd(1024, 'x')) } });
    expect(users.status).toBe(201);
    expect(users.ms).toBeLessThanOrEqual(boundMs);
    const deep = (d: number): unknown => (d === 0 ? 'x' : { a: deep(d - 1), b: 'y'.repeat(2000) });
    const nested = await cpuOf({ metadata: { name: 'deep' }, spec: { x: deep(95) } });
    expect(nested.status).toBe(201);
    expect(nested.ms).toBeLessThanOrEqual(boundMs);
  });

  it('2,000 objects below an unknown field of 1 MB are pruned with a warning within the bound (the duplicate-key scan copied the whole path for each: 1.4 s, a review of stop 65)', async () => {
    const nested = Array.from({ length: 2_000 }, () => ({}));
    const a = await cpuOf({ metadata: { name: 'long-key' }, spec: { ['k'.repeat(1_000_000)]: nested } });
    expect(a.status).toBe(201);
    expect(a.ms).toBeLessThan(boundMs);
  });

  it('patches under the bound cannot grow an object past it: the second 2,000 labels are 422 TooMany, within the bound', async () => {
    const created = await server.fetch(`${server.api}/teams`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ metadata: { name: 'growing', labels: entries(2_000, label) } }) });
    expect(created.status).toBe(201);
    const more = { metadata: { labels: entries(2_000, (i) => label(i + 2_000)) } };
    // Refused, so sent again unchanged while it takes more than the bound.
    const patched = await cpuOf(more, 'PATCH', `${new URL(server.api).pathname}/teams/growing`, 'application/merge-patch+json');
    expect(patched.status).toBe(422);
    expect(patched.body).toMatchObject({ reason: 'Invalid', message: 'Team.management.service "growing" is invalid: <object>: Too many: may hold at most 2048 fields and list items (docs/api.md, bounds on one request)' });
    expect(patched.ms).toBeLessThanOrEqual(boundMs);
    const stored = (await (await server.fetch(`${server.api}/teams/growing`)).json()) as { metadata: { labels: Record<string, string> } };
    expect(Object.keys(stored.metadata.labels)).toHaveLength(2_000);
  });
});
