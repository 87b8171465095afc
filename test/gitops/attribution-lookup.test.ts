/**
 * Issue 28, point 1: `--server https://host:port` (no path) reads the audit trail under the same
 * API root as every other request, so drift is named by person; a lookup that fails says so in
 * every form of the report instead of falling back quietly.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Report } from '../../src/gitops/report/report.js';
import { root, teamkeys } from '../support/cli.js';
import { kubectl, kubectlPath, kubeconfigWithToken, startServe, type Served } from '../server/serve-process.js';
import { newRepo, type Repo } from './git-repo.js';

const ajv = new Ajv({ allErrors: true, strict: false });
(addFormatsModule as unknown as (a: Ajv) => Ajv)(ajv);
const validReport = ajv.compile(JSON.parse(readFileSync(join(root, 'schemas/report.schema.json'), 'utf8')) as object);

const olgaKey = 'OlgaLaptopKey0123456789abcdefghijklmnopqrstuvwxyz';
const patKey = 'PatPlannerKey0123456789abcdefghijklmnopqrstuvwxyz';
const people = `apiVersion: management.service/v1
kind: Team
metadata: {name: ops}
spec: {users: [olga], clusterRoles: [{name: teams-admin}]}
---
apiVersion: management.service/v1
kind: Team
metadata: {name: planners}
spec: {users: [pat], clusterRoles: [{name: teams-admin}, {name: accesskeys-admin}]}
---
apiVersion: management.service/v1
kind: OwnedAccessKey
metadata: {name: olga-laptop}
spec: {user: olga, key: ${olgaKey}}
---
apiVersion: management.service/v1
kind: OwnedAccessKey
metadata: {name: pat-ci}
spec: {user: pat, key: ${patKey}}
`;

describe('drift attribution against a server given without its path', () => {
  let served: Served;
  let repo: Repo;
  let origin: string;
  const run = (command: string, tokenFile: string) => {
    const reports = join(served.dir, `reports-${command}-${tokenFile.endsWith('pat.key') ? 'pat' : 'admin'}`);
    const r = teamkeys([command, '--source', repo.dir, '--source-id', 'team-repo', '--server', origin, '--token-file', tokenFile, '--ca-file', join(served.dir, 'tls/cert.pem'), '--report-dir', reports]);
    const report = JSON.parse(readFileSync(join(reports, 'report.json'), 'utf8')) as Report;
    expect(validReport(report), JSON.stringify(validReport.errors)).toBe(true);
    return { ...r, report, markdown: readFileSync(join(reports, 'report.md'), 'utf8') };
  };
  const platformDrift = (report: Report) => report.objects.find((o) => o.name === 'platform')?.changes.find((c) => c.path === 'spec.displayName');

  beforeAll(async () => {
    kubectlPath();
    served = await startServe();
    // https://127.0.0.1:PORT, as the README says a user may type it.
    origin = new URL(served.url).origin;
    repo = await newRepo();
    expect(kubectl(served, ['create', '-f', '-'], { input: people }).code).toBe(0);
    expect(run('apply', join(served.dir, 'admin.key')).code).toBe(0);
    const olga = kubeconfigWithToken(served, olgaKey, 'olga');
    expect(kubectl(served, ['patch', 'team', 'platform', '--type=merge', '-p', '{"spec":{"displayName":"By Olga"}}'], { kubeconfig: olga }).code).toBe(0);
  });
  afterAll(async () => {
    await served.stop();
    repo.cleanup();
  });

  it('names the person and key behind the drift, from the audit trail under /kubernetes/management', () => {
    const plan = run('plan', join(served.dir, 'admin.key'));
    expect(plan.stderr).toBe('');
    expect(plan.report.attributionUnavailable).toBeUndefined();
    expect(platformDrift(plan.report)?.lastChangedBy).toMatchObject({ manager: 'kubectl-patch', user: 'olga', keyName: 'olga-laptop' });
    expect(plan.stdout).toContain('olga (key olga-laptop) via kubectl-patch');
    expect(plan.markdown).not.toContain('attribution unavailable');
  });

  it('a key that may not read the audit trail gets a plan that says attribution was unavailable, and why', () => {
    const patFile = join(served.dir, 'pat.key');
    writeFileSync(patFile, `${patKey}\n`);
    const plan = run('plan', patFile);
    expect(plan.code).toBe(0);
    expect(plan.report.attributionUnavailable).toMatch(/HTTP 403: this key may not read the audit trail/);
    // Drift is still found, named by field manager only.
    expect(platformDrift(plan.report)?.lastChangedBy).toMatchObject({ manager: 'kubectl-patch' });
    expect(platformDrift(plan.report)?.lastChangedBy?.user).toBeUndefined();
    expect(plan.stdout).toMatch(/^attribution unavailable: GET \/kubernetes\/management\/apis\/audit\.management\.service\/v1\/events: HTTP 403/m);
    expect(plan.markdown).toMatch(/^> attribution unavailable: .*HTTP 403/m);
  });
});
