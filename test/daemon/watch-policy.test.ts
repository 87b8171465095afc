import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Report } from '../../src/gitops/report/report.js';
import { root } from '../support/cli.js';
import { kubectl, startServe, type Served } from '../server/serve-process.js';
import { eventually, startWatch, type Watcher } from './watch-process.js';

describe('teamkeys watch --policy', () => {
  let served: Served;
  let work: string;
  let watcher: Watcher | undefined;
  beforeAll(async () => {
    served = await startServe();
    work = mkdtempSync(join(tmpdir(), 'teamkeys-watch-policy-'));
  });
  afterAll(async () => {
    await watcher?.stop();
    await served.stop();
    rmSync(work, { recursive: true, force: true });
  });

  /**
   * A watch (of `bin`) of a folder named `id`, with the no-wildcard-verbs policy and a report
   * folder, started once `files` are written; its last report, read when asked.
   */
  const watchWithPolicy = async (id: string, files: Record<string, string>, bin?: string) => {
    const source = join(work, `${id}-source`);
    const policies = join(work, `${id}-policies`);
    const reports = join(work, `${id}-reports`);
    cpSync(join(root, 'examples/policies/no-wildcard-verbs.yaml'), join(policies, 'no-wildcard-verbs.yaml'));
    mkdirSync(source);
    for (const [name, text] of Object.entries(files)) writeFileSync(join(source, name), text);
    watcher = await startWatch(['--source', source, '--source-id', id, '--interval', '1s', '--policy', policies, '--report-dir', reports, '--server', served.url, '--token-file', join(served.dir, 'admin.key'), '--ca-file', join(served.dir, 'tls/cert.pem')], bin);
    const report = () => {
      try {
        return JSON.parse(readFileSync(join(reports, 'report.json'), 'utf8')) as Report;
      } catch {
        return undefined;
      }
    };
    return { source, policies, report };
  };

  it('a violation writes nothing; policies are read again every cycle', async () => {
    const { source, policies, report } = await watchWithPolicy('watched', { 'ops.yaml': 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: ops\nspec:\n  access:\n    - name: all\n      verbs: ["*"]\n      teams: [ops]\n' });
    const invalid = await eventually('a cycle reports the violation', () => (report()?.outcome === 'invalid' ? report() : undefined));
    expect(invalid.errors).toEqual([{ file: 'ops.yaml', line: 7, column: 5, message: 'Team/ops violates policy "no-wildcard-verbs": access rules must list their verbs, not "*"' }]);
    expect(kubectl(served, ['get', 'team', 'ops']).code).not.toBe(0);
    rmSync(join(policies, 'no-wildcard-verbs.yaml'));
    writeFileSync(join(policies, 'team-owner.yaml'), readFileSync(join(root, 'examples/policies/team-owner.yaml')));
    writeFileSync(join(source, 'ops.yaml'), 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: ops\nspec:\n  owner: {user: ana}\n  access:\n    - name: all\n      verbs: ["*"]\n      teams: [ops]\n');
    await eventually('the next cycle applies under the edited policies', () => kubectl(served, ['get', 'team', 'ops']).code === 0, 15_000);
  });

  it('a running watch keeps the code it started with when its install is rebuilt or upgraded under it', async () => {
    await watcher?.stop();
    // An install of its own, as npm leaves one: the bundle (dist/), package.json, the schemas.
    const install = join(work, 'install');
    mkdirSync(install);
    for (const f of ['dist', 'schemas', 'package.json']) cpSync(join(root, f), join(install, f), { recursive: true });
    symlinkSync(join(root, 'node_modules'), join(install, 'node_modules'));
    // The first cycle stops at the unreadable file, before the policies are evaluated (and loaded).
    const { source, report } = await watchWithPolicy('upgraded', { 'broken.yaml': 'kind: [\n' }, join(install, 'dist/cli/main.js'));
    await eventually('the first cycle reports the unreadable file', () => report()?.outcome === 'invalid');
    // The upgrade: the next build's chunks have other names, and this build's are gone.
    rmSync(join(install, 'dist/chunks'), { recursive: true });
    rmSync(join(source, 'broken.yaml'));
    writeFileSync(join(source, 'upgraded.yaml'), 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: upgraded\nspec:\n  users: [ana]\n');
    await eventually('the next cycle evaluates the policies and applies', () => kubectl(served, ['get', 'team', 'upgraded']).code === 0, 15_000);
    expect(watcher!.stderr()).not.toContain('Cannot find module');
  });
});
