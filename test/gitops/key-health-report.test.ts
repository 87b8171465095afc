/**
 * Reports list live keys expiring within --warn-expiry (default 14d) and unused for --warn-unused
 * (default 90d), Login keys included: the report data and its text and Markdown forms (over a
 * ManualClock), then plan from the CLI, the daemon's report and the Action's job summary against
 * a real `teamkeys serve`. Never a key value.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpClient } from '../../src/client/http.js';
import { reconcile } from '../../src/gitops/reconcile.js';
import { keyHealthSection, keyHealthText } from '../../src/gitops/report/key-health.js';
import { renderMarkdown } from '../../src/gitops/report/markdown.js';
import type { Report } from '../../src/gitops/report/report.js';
import { renderText } from '../../src/gitops/report/text.js';
import { mintLoginKey } from '../../src/signin/mint.js';
import { root, teamkeys } from '../support/cli.js';
import { eventually, startWatch } from '../daemon/watch-process.js';
import { ManualClock, day } from '../support/clock.js';
import { adminKey, startInProcess } from '../support/in-process.js';
import { teamYaml } from '../support/manifests.js';
import { startServe, type Served } from '../support/serve-process.js';

const json = { 'Content-Type': 'application/json' };
const team = teamYaml('platform', { users: ['ana'] });

/** A folder with one Team manifest: what the reports are about is the live keys beside it. */
function sourceDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'teamkeys-key-health-src-'));
  writeFileSync(join(dir, 'platform.yaml'), team);
  return dir;
}

describe('the key health section of reports', () => {
  it('lists keys expiring within the window (and expired ones), and keys unused for longer, Login keys too; text and Markdown show it only when non-empty', async () => {
    const clock = new ManualClock('2026-08-01T00:00:00Z');
    const server = await startInProcess({ now: clock.now });
    const source = sourceDir();
    const values: string[] = [];
    const newKey = async (name: string, spec: Record<string, unknown> = {}) => {
      const res = await server.fetch(`${server.api}/ownedaccesskeys`, { method: 'POST', headers: json, body: JSON.stringify({ metadata: { name }, spec: { user: name, ...spec } }) });
      expect(res.status).toBe(201);
      values.push(((await res.json()) as { spec: { key: string } }).spec.key);
      return values.at(-1)!;
    };
    const client = new HttpClient({ server: server.base, token: adminKey });
    try {
      await newKey('idle');
      const used = await newKey('used');
      await newKey('off', { ttl: 101 * 86_400, disabled: true });
      const login = await mintLoginKey(
        server.registry,
        { username: 'lena', identity: { userId: 'u-lena', username: 'lena', connector: 'test', groups: [] } as never, ttlSeconds: 365 * 86_400, requester: { username: 'lena' }, via: 'in a test' },
        clock.now(),
      );
      values.push(login.key);
      await newKey('short', { ttl: 50 * 86_400 });
      clock.advance(95 * day);
      expect((await server.fetch(`${server.api}/ownedaccesskeys/used`, { headers: { Authorization: `Bearer ${used}` } })).status).toBe(200);
      await newKey('ci', { user: undefined, team: undefined, subject: 'repo:acme/app', ttl: 10 * 86_400 });
      clock.advance(5 * day);
      const run = async (opts: { warnExpiryMs?: number; warnUnusedMs?: number } = {}) =>
        (await reconcile({ mode: 'plan', client, source: { source, sourceId: 'src' }, prune: false, allowEmpty: false, maxPrune: 50, concurrency: 1, now: clock.now, ...opts })).report;

      const report = await run();
      expect(report.keyHealth).toEqual({
        warnExpirySeconds: 14 * 86_400,
        warnUnusedSeconds: 90 * 86_400,
        expiring: [
          { name: 'short', owner: 'short', expiresAt: '2026-09-20T00:00:00Z', expired: true },
          { name: 'ci', owner: 'repo:acme/app', expiresAt: '2026-11-14T00:00:00Z' },
        ],
        unused: [
          { name: 'idle', owner: 'idle', lastUse: '2026-08-01T00:00:00Z', neverUsed: true },
          { name: login.name, owner: 'lena', type: 'Login', lastUse: '2026-08-01T00:00:00Z', neverUsed: true },
          { name: 'short', owner: 'short', lastUse: '2026-08-01T00:00:00Z', neverUsed: true },
        ],
      });
      // The Login key is in the health section only: never planned.
      expect(report.objects.map((o) => o.name)).toEqual(['platform']);
      const text = renderText(report);
      expect(text).toContain(
        [
          'Keys expiring within 14d:',
          '  short (short): expired 2026-09-20T00:00:00Z, 50d ago (refused; not yet removed)',
          '  ci (repo:acme/app): expires 2026-11-14T00:00:00Z, in 5d',
          'Keys unused for more than 90d:',
          '  idle (idle): never used (created 2026-08-01T00:00:00Z, 100d ago)',
          `  ${login.name} (lena) [Login]: never used (created 2026-08-01T00:00:00Z, 100d ago)`,
        ].join('\n'),
      );
      const markdown = renderMarkdown(report);
      expect(markdown).toContain('### Keys expiring within 14d\n\n| Key | Owner | Expiry |\n|---|---|---|\n| `short` | short | expired 2026-09-20T00:00:00Z, 50d ago (refused; not yet removed) |\n| `ci` | repo:acme/app | expires 2026-11-14T00:00:00Z, in 5d |');
      expect(markdown).toContain(`### Keys unused for more than 90d\n\n| Key | Owner | Last use |\n|---|---|---|\n| \`idle\` | idle | never used (created 2026-08-01T00:00:00Z, 100d ago) |\n| \`${login.name}\` (Login) | lena |`);
      for (const v of values) expect(JSON.stringify(report) + text + markdown).not.toContain(v);

      // A pull request's plan (untrusted: it shows no live value its manifests do not name) lists no keys.
      expect((await reconcile({ mode: 'plan', client, source: { source, sourceId: 'src' }, prune: false, allowEmpty: false, maxPrune: 50, concurrency: 1, now: clock.now, withholdUnnamedLiveValues: true })).report.keyHealth).toBeUndefined();
      // Narrower windows: ci (5 days left) is not within 3d; nothing has gone unused for 101d.
      const narrow = await run({ warnExpiryMs: 3 * day, warnUnusedMs: 101 * day });
      expect(narrow.keyHealth).toEqual({ warnExpirySeconds: 3 * 86_400, warnUnusedSeconds: 101 * 86_400, expiring: [{ name: 'short', owner: 'short', expiresAt: '2026-09-20T00:00:00Z', expired: true }], unused: [] });
      expect(renderMarkdown(narrow)).not.toContain('Keys unused');
      // Nothing to say: no section at all.
      await server.fetch(`${server.api}/ownedaccesskeys/short`, { method: 'DELETE' });
      const quiet = await run({ warnExpiryMs: 3 * day, warnUnusedMs: 101 * day });
      expect(quiet.keyHealth).toBeUndefined();
      expect(renderText(quiet)).not.toContain('Keys ');
      expect(renderMarkdown(quiet)).not.toContain('### Keys');
    } finally {
      await client.close();
      await server.close();
      rmSync(source, { recursive: true, force: true });
    }
  });

  describe('against a real teamkeys serve', () => {
    let served: Served;
    let source: string;
    let work: string;
    let tokenFile: string;

    beforeAll(async () => {
      served = await startServe(['--insecure-http', '--log-level', 'warn']);
      source = sourceDir();
      work = mkdtempSync(join(tmpdir(), 'teamkeys-key-health-'));
      tokenFile = join(work, 'admin.key');
      writeFileSync(tokenFile, `${served.adminKey}\n`, { mode: 0o600 });
      for (const [name, ttl] of [['deploy', 2], ['nightly', 10]] as const) {
        const res = await fetch(`${served.url}/apis/management.service/v1/ownedaccesskeys`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${served.adminKey}`, ...json },
          body: JSON.stringify({ metadata: { name }, spec: { user: 'ci-bot', ttl: ttl * 86_400 } }),
        });
        expect(res.status).toBe(201);
      }
    }, 30_000);
    afterAll(async () => {
      await served.stop();
      rmSync(source, { recursive: true, force: true });
      rmSync(work, { recursive: true, force: true });
    });
    const target = () => ['--source', source, '--source-id', 'src', '--server', served.url, '--token-file', tokenFile];

    it('plan lists them by --warn-expiry; a bad duration is a flag error before anything is read', () => {
      const wide = teamkeys(['plan', ...target(), '-o', 'json']);
      expect(wide.code, wide.stderr).toBe(0);
      expect((JSON.parse(wide.stdout) as Report).keyHealth?.expiring.map((k) => [k.name, k.owner])).toEqual([['deploy', 'ci-bot'], ['nightly', 'ci-bot']]);
      const narrow = teamkeys(['plan', ...target(), '--warn-expiry', '3d', '-o', 'markdown']);
      expect(narrow.code, narrow.stderr).toBe(0);
      expect(narrow.stdout).toMatch(/### Keys expiring within 3d\n\n\| Key \| Owner \| Expiry \|\n\|---\|---\|---\|\n\| `deploy` \| ci-bot \| expires \S+, in [12]d \|\n\n/);
      expect(narrow.stdout).not.toContain('nightly');
      const text = teamkeys(['apply', ...target(), '--warn-expiry', '3d']);
      expect(text.code, text.stderr).toBe(0);
      expect(text.stdout).toMatch(/\nKeys expiring within 3d:\n {2}deploy \(ci-bot\): expires \S+, in [12]d\nCreated 1,/);
      const bad = teamkeys(['plan', ...target(), '--warn-unused', '3months']);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain('--warn-unused must be a duration such as 30s, 5m, 90d or 500ms, not "3months"');
      const serveBad = teamkeys(['serve', '--store', 'memory:', '--disable-unused-after', '90 days']);
      expect(serveBad.code).toBe(1);
      expect(serveBad.stderr).toContain('--disable-unused-after must be a duration such as 30s, 5m, 90d or 500ms, not "90 days"');
    });

    it("the daemon's report (teamkeys watch --warn-expiry) has the section", async () => {
      const reports = join(work, 'watch-reports');
      const w = await startWatch([...target(), '--report-dir', reports, '--warn-expiry', '3d', '--interval', '1h']);
      try {
        const report = await eventually('the first report', () => (existsSync(join(reports, 'report.json')) ? (JSON.parse(readFileSync(join(reports, 'report.json'), 'utf8')) as Report) : undefined));
        expect(report.keyHealth?.expiring.map((k) => k.name)).toEqual(['deploy']);
        expect(readFileSync(join(reports, 'report.md'), 'utf8')).toContain('### Keys expiring within 3d');
      } finally {
        await w.stop();
      }
    });

    /** The bundled Action as a runner runs it (a push event: no comment). */
    async function runAction(inputs: Record<string, string>) {
      const dir = mkdtempSync(join(work, 'step-'));
      const summary = join(dir, 'summary');
      writeFileSync(summary, '');
      writeFileSync(join(dir, 'output'), '');
      const env: Record<string, string> = { PATH: process.env.PATH ?? '', HOME: dir, RUNNER_TEMP: dir, GITHUB_ACTIONS: 'true', GITHUB_WORKSPACE: source, GITHUB_OUTPUT: join(dir, 'output'), GITHUB_STEP_SUMMARY: summary, GITHUB_EVENT_NAME: 'push', GITHUB_REF: 'refs/heads/main', GITHUB_EVENT_PATH: join(dir, 'event.json') };
      writeFileSync(env.GITHUB_EVENT_PATH!, JSON.stringify({ ref: 'refs/heads/main', repository: { default_branch: 'main' } }));
      for (const [name, value] of Object.entries({ command: 'plan', server: served.url, token: served.adminKey, 'source-id': 'src', comment: 'false', ...inputs })) env[`INPUT_${name.toUpperCase()}`] = value;
      const r = await new Promise<{ status: number | null; stdout: string }>((done) => {
        const child = spawn(process.execPath, [join(root, 'dist-action/index.mjs')], { cwd: source, env, timeout: 60_000 });
        let stdout = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        child.on('close', (status) => done({ status, stdout }));
      });
      return { ...r, summary: readFileSync(summary, 'utf8') };
    }

    it('the job summary lists them by the warn-expiry input; a bad warn-unused input fails the step', async () => {
      const r = await runAction({ 'warn-expiry': '3d' });
      expect(r.status, r.stdout).toBe(0);
      expect(r.summary).toContain('### Keys expiring within 3d');
      expect(r.summary).toContain('| `deploy` | ci-bot | expires ');
      expect(r.summary).not.toContain('nightly');
      expect(r.summary).not.toContain(served.adminKey);
      const bad = await runAction({ 'warn-unused': '3 months' });
      expect(bad.status).toBe(1);
      expect(bad.stdout).toContain('::error::the warn-unused input must be a duration such as 30s, 5m, 90d or 500ms, not "3 months"');
    });
  });
});

describe('key health section, a key without a creation time', () => {
  it('lists a never-used key without a creation time as unused, saying it has none (not "created 1970")', () => {
    const now = new Date('2026-11-09T00:00:00Z');
    const undated = { apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', metadata: { name: 'restored' }, spec: { user: 'rae' } };
    const section = keyHealthSection([undated], now, { warnExpiryMs: 14 * day, warnUnusedMs: 90 * day });
    expect(section?.unused).toEqual([{ name: 'restored', owner: 'rae', lastUse: '1970-01-01T00:00:00Z', neverUsed: true }]);
    expect(keyHealthText(section, now.toISOString())).toContain('  restored (rae): never used (no creation time)');
  });
});
