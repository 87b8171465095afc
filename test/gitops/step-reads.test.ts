/**
 * Issue 39, "every API write of a GitOps step in one place": a step reads the audit trail of the
 * objects it would change concurrently (a bounded few at once, never one after another), keeps the
 * report in the plan's order, and diffs each object once however many reads follow.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { HttpClient } from '../../src/client/http.js';
import type { ApiClient } from '../../src/client/types.js';
import { reconcile } from '../../src/gitops/reconcile.js';
import { adminKey, startInProcess, type InProcess } from '../support/in-process.js';
import { teamYaml } from '../support/manifests.js';

// Counts how often planning diffs an object, calling the real diff each time.
const diffs = vi.hoisted(() => ({ count: 0 }));
vi.mock('../../src/gitops/plan/diff.js', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/gitops/plan/diff.js')>();
  return { ...real, diffObject: (...args: Parameters<typeof real.diffObject>) => (diffs.count++, real.diffObject(...args)) };
});

/** The client with its audit reads counted: how many in all, and the most in flight at once. */
function countingAudit(inner: HttpClient): { client: ApiClient; reads: { total: number; inFlight: number; most: number } } {
  const reads = { total: 0, inFlight: 0, most: 0 };
  const client = new Proxy(inner, {
    get(target, prop) {
      if (prop === 'auditEvents') {
        return async (...args: Parameters<ApiClient['auditEvents']>) => {
          reads.total++;
          reads.most = Math.max(reads.most, ++reads.inFlight);
          try {
            return await target.auditEvents(...args);
          } finally {
            reads.inFlight--;
          }
        };
      }
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { client, reads };
}

const names = Array.from({ length: 20 }, (_, i) => `team-${String(i).padStart(2, '0')}`);

describe('a step with many drifted objects', () => {
  let server: InProcess;
  let http: HttpClient;
  let source: string;
  const run = (client: ApiClient) => reconcile({ mode: 'plan', client, source: { source, sourceId: 'src' }, prune: false, allowEmpty: false, maxPrune: 50, concurrency: 8 });

  beforeAll(async () => {
    server = await startInProcess({ audit: true });
    http = new HttpClient({ server: server.base, token: adminKey });
    source = mkdtempSync(join(tmpdir(), 'teamkeys-step-reads-'));
    for (const name of names) writeFileSync(join(source, `${name}.yaml`), teamYaml(name, { displayName: 'From git', users: ['ana'] }));
    const applied = await reconcile({ mode: 'apply', client: http, source: { source, sourceId: 'src' }, prune: false, allowEmpty: false, maxPrune: 50, concurrency: 8 });
    expect(applied.report.outcome).toBe('applied');
    // Someone edits every Team by hand: drift the plan names by person, from the audit trail.
    for (const name of names) {
      const res = await server.fetch(`${server.api}/teams/${name}?fieldManager=kubectl-edit`, { method: 'PATCH', headers: { 'Content-Type': 'application/merge-patch+json' }, body: JSON.stringify({ spec: { displayName: `Edited ${name}` } }) });
      expect(res.status).toBe(200);
    }
  });
  afterAll(async () => {
    await http.close();
    await server.close();
    rmSync(source, { recursive: true, force: true });
  });

  it('reads the audit trail of the changed objects several at a time, at most 8, and names each drift in plan order', async () => {
    const { client, reads } = countingAudit(http);
    const { report } = await run(client);
    expect(report.attributionUnavailable).toBeUndefined();
    expect(reads.total).toBe(names.length);
    expect(reads.most).toBeGreaterThan(1);
    expect(reads.most).toBeLessThanOrEqual(8);
    expect(report.objects.map((o) => o.name)).toEqual(names);
    for (const o of report.objects) {
      const change = o.changes.find((c) => c.path === 'spec.displayName');
      expect(change, o.name).toMatchObject({ drift: true, before: `Edited ${o.name}`, after: 'From git', lastChangedBy: { manager: 'kubectl-edit', user: 'admin' } });
    }
  });

  it('diffs each object once, with its audit trail read', async () => {
    diffs.count = 0;
    const { report } = await run(http);
    expect(report.objects.filter((o) => o.changes.some((c) => c.drift))).toHaveLength(names.length);
    expect(diffs.count).toBe(names.length);
  });
});
