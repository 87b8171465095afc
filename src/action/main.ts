#!/usr/bin/env node
/**
 * The GitHub Action's entry: inputs (INPUT_*) -> validate / plan / apply -> outputs
 * (GITHUB_OUTPUT), the Markdown report as the job summary, and validation errors as annotations.
 */
import { readFile } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import * as core from '@actions/core';
import { EmbeddedClient } from '../client/embedded.js';
import { HttpClient } from '../client/http.js';
import type { ApiClient } from '../client/types.js';
import { reconcile, validateSource } from '../gitops/reconcile.js';
import { renderMarkdown } from '../gitops/report/markdown.js';
import type { Report } from '../gitops/report/report.js';
import { openEmbedded } from '../cli/embedded.js';
import { writeReports } from '../cli/gitops-flags.js';

/** An input by its action.yml name; composite steps may pass it with underscores instead of dashes. */
function input(name: string, fallback = ''): string {
  const value = core.getInput(name) || process.env[`INPUT_${name.replace(/-/g, '_').toUpperCase()}`] || '';
  return value.trim() || fallback;
}

const flag = (name: string) => ['true', 'yes', '1'].includes(input(name, 'false').toLowerCase());

async function openTarget(group: string): Promise<ApiClient> {
  const server = input('server');
  if (server) {
    const token = input('token');
    if (!token) throw new Error('the server input needs the token input (an access key, from a secret)');
    const ca = input('ca-cert');
    return new HttpClient({ server, token, group, ...(ca ? { ca: Buffer.from(ca) } : {}) });
  }
  const url = input('store', 'sqlite:.teamkeys/teamkeys.db');
  const keyFile = input('encryption-key-file');
  const { store, registry } = await openEmbedded(url, { group, ...(keyFile ? { encryptionKeyFile: keyFile } : {}) });
  return new EmbeddedClient(registry, url, () => store.close());
}

async function run(): Promise<void> {
  const token = input('token');
  if (token) core.setSecret(token);
  const command = input('command', 'plan');
  if (!['validate', 'plan', 'apply'].includes(command)) throw new Error(`command must be validate, plan or apply, not "${command}"`);
  const workspace = process.env.GITHUB_WORKSPACE ?? process.cwd();
  const sourceDir = resolve(workspace, input('source', '.'));
  const group = input('api-group', 'management.service');
  const source = {
    source: sourceDir,
    ...(input('path') ? { path: input('path') } : {}),
    ...(input('source-id') ? { sourceId: input('source-id') } : {}),
  };
  let report: Report;
  if (command === 'validate') {
    report = (await validateSource(source, `${group}/v1`)).report;
  } else {
    const client = await openTarget(group);
    try {
      report = (
        await reconcile({
          mode: command as 'plan' | 'apply',
          client,
          source,
          prune: flag('prune'),
          allowEmpty: false,
          maxPrune: Number(input('max-prune', '50')),
          concurrency: 8,
        })
      ).report;
    } finally {
      await client.close();
    }
  }
  const reportDir = resolve(workspace, input('report-dir', 'teamkeys-report'));
  await writeReports(report, reportDir);
  const markdown = renderMarkdown(report);
  await core.summary.addRaw(markdown).write();
  // Annotations name files from the repository root, where the source folder sits.
  const prefix = relative(workspace, sourceDir);
  for (const e of report.errors) {
    core.error(e.message, { title: 'teamkeys', file: prefix ? join(prefix, e.file) : e.file, startLine: e.line, startColumn: e.column });
  }
  const s = report.summary;
  const changes = s.create + s.update + s.replace + s.delete;
  core.setOutput('outcome', report.outcome);
  core.setOutput('changes', String(changes));
  core.setOutput('drift', String(s.drifted));
  core.setOutput('report-json', join(reportDir, 'report.json'));
  core.setOutput('report-markdown', join(reportDir, 'report.md'));
  core.info(`teamkeys ${command}: ${report.outcome}; ${changes} change(s), ${s.drifted} drifted, report in ${relative(workspace, reportDir) || '.'}`);
  if (report.outcome === 'invalid') core.setFailed(`${report.errors.length} error(s) in the manifests`);
  else if (report.outcome === 'refused') core.setFailed(report.refused ?? 'refused');
  else if (report.outcome === 'failed') core.setFailed(`${s.failed} write(s) failed`);
  else if (flag('fail-on-drift') && s.drifted > 0) core.setFailed(`${s.drifted} object(s) drifted from git (see the job summary)`);
}

run().catch((err: unknown) => core.setFailed(err instanceof Error ? err.message : String(err)));
