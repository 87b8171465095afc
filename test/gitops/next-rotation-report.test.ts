/**
 * Issue 40 point 8: a plan shows when a key's scheduled rotation (rotate-every) is next due, in the
 * report's JSON, text and Markdown, the same time `teamkeys keys` shows in NEXT ROTATION.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/client/http.js';
import { reconcile } from '../../src/gitops/reconcile.js';
import { renderMarkdown } from '../../src/gitops/report/markdown.js';
import { renderText } from '../../src/gitops/report/text.js';
import { root } from '../support/cli.js';
import { ManualClock, day } from '../support/clock.js';
import { adminKey, startInProcess } from '../support/in-process.js';
import { teamYaml } from '../support/manifests.js';

const ajv = new Ajv({ allErrors: true, strict: false });
(addFormatsModule as unknown as (a: Ajv) => Ajv)(ajv);
const validReport = ajv.compile(JSON.parse(readFileSync(join(root, 'schemas/report.schema.json'), 'utf8')) as object);

describe('the next scheduled rotation in a plan report', () => {
  it('lists a rotate-every key not due yet with its next due time in report.json, the text and report.md; a key without a schedule is not listed', async () => {
    const clock = new ManualClock('2026-08-01T00:00:00Z');
    const server = await startInProcess({ now: clock.now });
    const source = mkdtempSync(join(tmpdir(), 'teamkeys-next-rotation-'));
    writeFileSync(join(source, 'platform.yaml'), teamYaml('platform', { users: ['ana'] }));
    try {
      const annotations = { 'gitops.management.service/key-secret': 'github:acme/app/DEPLOY_KEY', 'gitops.management.service/rotate-every': '30d' };
      for (const [name, a] of [['deploy', annotations], ['plain', {}]] as const) {
        const res = await server.fetch(`${server.api}/ownedaccesskeys`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ metadata: { name, annotations: a }, spec: { user: 'ana' } }) });
        expect(res.status).toBe(201);
      }
      clock.advance(10 * day);
      const client = new HttpClient({ server: server.base, token: adminKey });
      const { report } = await reconcile({ mode: 'plan', client, source: { source, sourceId: 'src' }, prune: false, allowEmpty: false, maxPrune: 50, concurrency: 1, now: clock.now });
      expect(report.keyHealth?.scheduled).toEqual([{ name: 'deploy', owner: 'ana', rotateEvery: '30d', nextRotationAt: '2026-08-31T00:00:00Z' }]);
      expect(validReport(JSON.parse(JSON.stringify(report)))).toBe(true);
      expect(renderText(report)).toContain('deploy (ana): every 30d, next 2026-08-31T00:00:00Z, in 20d');
      const markdown = renderMarkdown(report);
      expect(markdown).toContain('| Key | Owner | Next rotation |');
      expect(markdown).toContain('| `deploy` | ana | every 30d, next 2026-08-31T00:00:00Z, in 20d |');
      expect(markdown).not.toContain('`plain`');
    } finally {
      await server.close();
      rmSync(source, { recursive: true, force: true });
    }
  });
});
