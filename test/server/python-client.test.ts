/**
 * The Kubernetes Python client (Debian's python3-kubernetes, run by /usr/bin/python3, which sees
 * Debian's packages) against a served process over TLS: discovery, writes, paging, watches, apply.
 * .ci/run installs the package; a machine without it fails here with a message, never skips.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { SqliteStore } from '../../src/store/backends/sqlite.js';
import { startServe, type Served } from './serve-process.js';

const python = '/usr/bin/python3';
const script = join(import.meta.dirname, 'python-client.py');

describe('the Kubernetes Python client', () => {
  let served: Served;
  let dir: string;
  let ca: string;

  beforeAll(async () => {
    const probe = spawnSync(python, ['-c', 'import kubernetes'], { encoding: 'utf8' });
    if (probe.status !== 0) throw new Error(`${python} cannot import kubernetes: install Debian's python3-kubernetes (apt-get install -y python3-kubernetes), as .ci/run does\n${probe.stderr}`);
    dir = mkdtempSync(join(tmpdir(), 'teamkeys-python-'));
    const db = join(dir, 'teamkeys.db');
    served = await startServe(['--store', `sqlite:${db}`]);
    // History before now is compacted away, so a watch from resourceVersion 1 is 410 Expired.
    const store = new SqliteStore(db);
    await store.compact(await store.currentRevision());
    await store.close();
    const kubeconfig = parse(readFileSync(served.kubeconfig, 'utf8')) as { clusters: { cluster: { 'certificate-authority-data': string } }[] };
    ca = join(dir, 'ca.pem');
    writeFileSync(ca, Buffer.from(kubeconfig.clusters[0]!.cluster['certificate-authority-data'], 'base64'));
  }, 60_000);
  afterAll(async () => {
    await served?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('works unchanged: every step of the script passes', () => {
    const r = spawnSync(python, [script, served.url, served.adminKey, ca], { encoding: 'utf8', timeout: 120_000, env: { PATH: process.env.PATH ?? '', HOME: dir } });
    const steps = r.stdout.split('\n').filter((l) => l.startsWith('ok ')).map((l) => l.slice(3));
    expect(r.stderr, r.stderr).not.toContain('Traceback');
    expect(steps).toEqual([
      'discovery',
      'discovery with a trailing slash',
      'create',
      'get',
      'list with a label selector, paged',
      'replace: stale is 409, fresh succeeds',
      'JSON patch and merge patch',
      'strategic merge patch is 415',
      'server-side apply: conflict without force, taken with force=True',
      'status subresource',
      'watch from a resourceVersion with bookmarks allowed',
      'watch without a resourceVersion starts with ADDED events',
      'watch from an expired resourceVersion raises ApiException 410',
      'delete with preconditions and propagation policies',
    ]);
    expect(r.status).toBe(0);
  }, 150_000);
});
