import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

  it('a violation writes nothing; policies are read again every cycle', async () => {
    const source = join(work, 'source');
    const policies = join(work, 'policies');
    cpSync(join(root, 'examples/policies/no-wildcard-verbs.yaml'), join(policies, 'no-wildcard-verbs.yaml'));
    mkdirSync(source);
    writeFileSync(join(source, 'ops.yaml'), 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: ops\nspec:\n  access:\n    - name: all\n      verbs: ["*"]\n      teams: [ops]\n');
    const reports = join(work, 'reports');
    watcher = await startWatch(['--source', source, '--source-id', 'watched', '--interval', '1s', '--policy', policies, '--report-dir', reports, '--server', served.url, '--token-file', join(served.dir, 'admin.key'), '--ca-file', join(served.dir, 'tls/cert.pem')]);
    const report = () => {
      try {
        return JSON.parse(readFileSync(join(reports, 'report.json'), 'utf8')) as Report;
      } catch {
        return undefined;
      }
    };
    const invalid = await eventually('a cycle reports the violation', () => (report()?.outcome === 'invalid' ? report() : undefined));
    expect(invalid.errors).toEqual([{ file: 'ops.yaml', line: 7, column: 5, message: 'Team/ops violates policy "no-wildcard-verbs": access rules must list their verbs, not "*"' }]);
    expect(kubectl(served, ['get', 'team', 'ops']).code).not.toBe(0);
    rmSync(join(policies, 'no-wildcard-verbs.yaml'));
    writeFileSync(join(policies, 'team-owner.yaml'), readFileSync(join(root, 'examples/policies/team-owner.yaml')));
    writeFileSync(join(source, 'ops.yaml'), 'apiVersion: management.service/v1\nkind: Team\nmetadata:\n  name: ops\nspec:\n  owner: {user: ana}\n  access:\n    - name: all\n      verbs: ["*"]\n      teams: [ops]\n');
    await eventually('the next cycle applies under the edited policies', () => kubectl(served, ['get', 'team', 'ops']).code === 0, 15_000);
  });
});
