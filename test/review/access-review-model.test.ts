/**
 * The access review against the request path, in random worlds: every row (and every absence of
 * one) agrees with what the real server answers `kubectl auth can-i` for a key of that identity,
 * and after random writes `--since` names a grant for every answer that changed, and only rows
 * that changed.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { OwnedAccessKey } from '../../src/api/types.js';
import { diffReviews, rowsOf } from '../../src/review/diff.js';
import type { ReviewDocument, Row } from '../../src/review/model.js';
import { groups, teamField, world } from '../auth/model/world.js';
import { askers, inBatches, objectsFor, patch, questions, review, reviewSays, serverSays, serveWorld, type Question, type Served } from './review-world.js';

const keysOf = (doc: ReviewDocument) => new Map(doc.identities.flatMap((i) => i.keys.map((k) => [k.name, k] as const)));

/** Asks every question with a key of every identity; returns the answers, and fails on the first disagreement. */
async function agree(s: Served, doc: ReviewDocument, objects: OwnedAccessKey[]): Promise<Map<string, boolean>> {
  const byName = new Map(objects.map((k) => [k.metadata.name!, k]));
  const asked: { keyName: string; key: string; q: Question; expected: boolean }[] = [];
  for (const a of askers(doc, s)) for (const q of questions(objects)) asked.push({ keyName: a.keyName, key: a.key, q, expected: reviewSays(q, a.rows, byName, a.owner) });
  const answers = new Map<string, boolean>();
  await inBatches(asked, 24, async ({ keyName, key, q, expected }) => {
    const actual = await serverSays(s, key, q);
    if (actual === undefined) return; // refused as a whole (a key the writes disabled): no answer to compare
    answers.set(`${keyName} ${q.verb} ${q.resource}/${q.name ?? '*'}`, actual);
    if (actual !== expected) {
      throw new Error(`key ${keyName}: can-i ${q.verb} ${q.resource}${q.name ? ` ${q.name}` : ''} is ${actual}, the review says ${expected}`);
    }
  });
  return answers;
}

async function listKeys(s: Served): Promise<OwnedAccessKey[]> {
  const res = await s.server.fetch(`${s.server.api}/ownedaccesskeys`);
  return ((await res.json()) as { items: OwnedAccessKey[] }).items;
}

const keyWrite = fc.oneof(
  fc.constant({ spec: { scope: null } }),
  fc.constant({ spec: { scope: { roles: [{ role: 'cli' }] } } }),
  fc.constant({ spec: { disabled: true } }),
  fc.constantFrom(...groups).map((g) => ({ spec: { groups: [g] } })),
);
const writes = fc.array(
  fc.oneof(
    { weight: 3, arbitrary: fc.record({ plural: fc.constant('teams' as const), pick: fc.nat(9), body: teamField.map((f) => ({ spec: f })) }) },
    fc.record({ plural: fc.constant('ownedaccesskeys' as const), pick: fc.nat(9), body: keyWrite }),
  ),
  { minLength: 1, maxLength: 4 },
);

describe('access-review agrees with the request path', () => {
  it('every row is what can-i answers, and --since names every changed answer', async () => {
    let runs = 0;
    // Bounded in time by skipping the worlds past the deadline, never by interrupting fast-check: a
    // loaded machine then plays fewer worlds (at least two) instead of failing with none played.
    const deadline = Date.now() + Number(process.env.REVIEW_MS ?? 15_000);
    await fc.assert(
      fc.asyncProperty(world, writes, async (w, ws) => {
        if (runs >= 2 && Date.now() > deadline) return;
        runs++;
        const s = await serveWorld(w.teams, w.keys);
        try {
          const before = await review(s);
          const answersBefore = await agree(s, before, await listKeys(s));
          for (const wr of ws) {
            // Writes to the world only (not the probes the questions are asked with).
            const names = wr.plural === 'teams' ? w.teams.map((t) => t.name) : w.keys.map((k) => k.name).filter((n) => s.values.has(n));
            if (names.length > 0) await patch(s, wr.plural, names[wr.pick % names.length]!, wr.body);
          }
          const objects = await listKeys(s);
          const after = await review(s);
          const answersAfter = await agree(s, after, objects);
          const diff = diffReviews(before, after);
          // Only rows that changed: granted ones are new, revoked ones are gone.
          const key = (r: Row) => `${r.identity}|${r.verb}|${r.object}|${r.path}`;
          const rowsBefore = new Set(rowsOf(before).map(key));
          const rowsAfter = new Set(rowsOf(after).map(key));
          for (const r of diff.granted) if (!r.identity.startsWith('key:')) expect(rowsBefore.has(key(r)) || !rowsAfter.has(key(r))).toBe(false);
          for (const r of diff.revoked) if (!r.identity.startsWith('key:')) expect(rowsAfter.has(key(r)) || !rowsBefore.has(key(r))).toBe(false);
          // Every answer that changed is named: a granted or revoked row of that key's identity, verb and object.
          const byName = new Map(objects.map((k) => [k.metadata.name!, k]));
          const askerOf = (doc: ReviewDocument, keyName: string) => askers(doc, s).find((a) => a.keyName === keyName);
          const idOf = (doc: ReviewDocument, keyName: string) => askerOf(doc, keyName)?.rows;
          for (const [asked, now] of answersAfter) {
            const was = answersBefore.get(asked);
            if (was === undefined || was === now) continue;
            const [keyName, verb, target] = asked.split(' ') as [string, string, string];
            const [resource, name] = target.split('/') as ['teams' | 'ownedaccesskeys', string];
            const q: Question = { verb, resource, ...(name !== '*' ? { name } : {}) };
            const who = idOf(after, keyName)!;
            const rowIds = new Set([who.id, `key:${keyName}`, idOf(before, keyName)?.id]);
            const objectsAsked = new Set([...objectsFor(q, askerOf(after, keyName)!.owner, byName), ...objectsFor(q, askerOf(before, keyName)?.owner ?? who, byName)]);
            const named = (now ? diff.granted : diff.revoked).some((r) => rowIds.has(r.identity) && r.verb === verb && objectsAsked.has(r.object));
            if (!named) throw new Error(`can-i ${asked} went from ${was} to ${now}, but --since names no ${now ? 'granted' : 'revoked'} row for it`);
          }
          expect(keysOf(after).size).toBeGreaterThan(0);
        } finally {
          await s.close();
        }
      }),
      { numRuns: Number(process.env.REVIEW_RUNS ?? 8) },
    );
    expect(runs).toBeGreaterThanOrEqual(2);
  }, Number(process.env.REVIEW_MS ?? 15_000) + 90_000);
});
