/** What `teamkeys sync` runs: POST /sync, then the daemon's cycle counters until one more cycle finished, then its report. */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { Report } from '../../gitops/report/report.js';
import { sign } from '../../daemon/webhook.js';
import { colourOn } from '../colour.js';
import { parseDuration } from '../duration.js';
import { CliError, reportExitCode } from '../errors.js';
import { checkOutput, formatReport } from '../gitops-flags.js';

export interface SyncFlags {
  server: string;
  tokenFile?: string;
  caFile?: string;
  webhookSecretFile?: string;
  wait: boolean;
  timeout: string;
  output: string;
}

interface Answer {
  status: number;
  text: string;
}

const readSecret = (file: string, flag: string) => readFile(file, 'utf8').then((t) => t.trim(), () => { throw new CliError(`cannot read ${flag} ${file}`); });

/** The daemon's endpoints are at the root of --server, whatever path it has (the API's /kubernetes/management). */
function endpoint(server: string, path: string): URL {
  let url: URL;
  try {
    url = new URL(server);
  } catch {
    throw new CliError(`--server must be an https:// (or http://) URL such as https://host:8080, not "${server}"`);
  }
  return new URL(path, url.origin);
}

function call(url: URL, method: string, headers: Record<string, string>, ca?: Buffer, body?: Buffer): Promise<Answer> {
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, timeout: 30_000, ...(ca ? { ca } : {}) }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (err) => reject(new CliError(`cannot reach ${url.origin}: ${err.message}${/self-signed|certificate/.test(err.message) ? ' (give --ca-file)' : ''}`)));
    req.end(body);
  });
}

function failure(what: string, a: Answer): CliError {
  let message = a.text.trim();
  try {
    message = (JSON.parse(a.text) as { message?: string }).message ?? message;
  } catch {
    // plain text
  }
  const hint = a.status === 404 ? ' (is --server a sidecar or a watch daemon?)' : a.status === 401 || a.status === 403 ? ' (the sidecar needs a management admin key: --token-file or TEAMKEYS_TOKEN)' : '';
  return new CliError(`${what}: HTTP ${a.status}${message ? `: ${message}` : ''}${hint}`);
}

/** Cycles the daemon finished: those that planned, and those that found nothing changed. */
function cycles(metrics: string): number {
  let n = 0;
  for (const m of metrics.matchAll(/^teamkeys_reconcile_(?:total\{[^}]*\}|unchanged_total) (\d+)/gm)) n += Number(m[1]);
  return n;
}

export async function sync(f: SyncFlags): Promise<number> {
  checkOutput(f.output);
  const timeoutMs = parseDuration('--timeout', f.timeout);
  const token = f.tokenFile ? await readSecret(f.tokenFile, '--token-file') : process.env.TEAMKEYS_TOKEN;
  const secret = f.webhookSecretFile ? await readSecret(f.webhookSecretFile, '--webhook-secret-file') : undefined;
  const ca = f.caFile ? await readFile(f.caFile).catch(() => { throw new CliError(`cannot read --ca-file ${f.caFile}`); }) : undefined;
  // A watch daemon with a webhook secret serves its report to that secret as a bearer token.
  const bearer = token ?? secret;
  const auth: Record<string, string> = bearer ? { Authorization: `Bearer ${bearer}` } : {};
  const get = async (path: string) => call(endpoint(f.server, path), 'GET', { ...auth, Accept: 'application/json' }, ca);
  const counted = async () => {
    const a = await get('/metrics');
    if (a.status !== 200) throw failure('cannot read the daemon\'s metrics', a);
    return cycles(a.text);
  };
  const before = f.wait ? await counted() : 0;
  // Each request is a delivery of its own (a new id, a body no other has): the daemon refuses a replayed one.
  const delivery = randomUUID();
  const body = secret ? Buffer.from(JSON.stringify({ teamkeysSync: delivery })) : Buffer.alloc(0);
  const headers: Record<string, string> = { ...auth, 'Content-Length': String(body.length), 'X-GitHub-Event': 'push', 'X-GitHub-Delivery': delivery, 'User-Agent': 'teamkeys-sync' };
  if (secret) Object.assign(headers, { 'Content-Type': 'application/json', 'X-Hub-Signature-256': sign(secret, body) });
  const posted = await call(endpoint(f.server, '/sync'), 'POST', headers, ca, body);
  if (posted.status !== 202) throw failure('the sync was not accepted', posted);
  if (!f.wait) {
    process.stderr.write(`sync requested from ${endpoint(f.server, '/').origin}\n`);
    return 0;
  }
  const deadline = Date.now() + timeoutMs;
  while ((await counted()) <= before) {
    if (Date.now() > deadline) throw new CliError(`no sync finished within ${f.timeout}: see the daemon's log (it may still be running)`);
    await new Promise((r) => setTimeout(r, 250));
  }
  const answer = await get('/sync/report');
  if (answer.status !== 200) throw failure('cannot read the sync report', answer);
  const report = JSON.parse(answer.text) as Report;
  process.stdout.write(formatReport(report, f.output, colourOn(process.stdout)));
  return reportExitCode(report, false);
}
