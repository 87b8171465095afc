/**
 * One token exchange (docs/federated.md: a job's ID token verified with the issuer's keys already
 * cached, its single-use record, the mint of a key through admission) against one GET of a key, on
 * one `teamkeys serve` process in the same run: the server's CPU time per request (read from
 * /proc, so neighbours on a shared machine do not count), one request at a time over one
 * keep-alive TLS connection. The issuer is the tests' (test/federation/issuer.ts): HTTPS on
 * loopback, trusted by the server through NODE_EXTRA_CA_CERTS as an operator trusts a private CA.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Agent, fetch } from 'undici';
import { startIssuer } from '../test/federation/issuer.js';
import { startServe } from '../test/support/serve-process.js';
import { figure, tempDir, type Figure, type Settings } from './lib.js';

/** CPU seconds (user + system) the process has used, from /proc/PID/stat. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // utime and stime are fields 14 and 15 of stat (11 and 12 after the command name), in ticks of 1/100 s on Linux.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

export async function federationExchange(s: Settings): Promise<Figure> {
  const n = s.quick ? 100 : 300;
  const warm = 10;
  const issuer = await startIssuer();
  const tmp = tempDir('federation');
  const caFile = join(tmp.dir, 'issuer-ca.pem');
  writeFileSync(caFile, issuer.ca);
  // Every exchange mints a key of the team: the quota (100 by default) would refuse the run.
  const served = await startServe(['--max-keys-per-user', String(2 * (n + warm))], { env: { NODE_EXTRA_CA_CERTS: caFile } });
  const dispatcher = new Agent({ connect: { ca: readFileSync(join(served.dir, 'tls/cert.pem')) }, connections: 1 });
  const api = `${served.url}/apis/management.service/v1`;
  const admin = { Authorization: `Bearer ${served.adminKey}`, 'Content-Type': 'application/json' };
  try {
    const post = async (path: string, body: object) => {
      const res = await fetch(`${api}/${path}`, { method: 'POST', dispatcher, headers: admin, body: JSON.stringify(body) });
      if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
    };
    await post('teams', { apiVersion: 'management.service/v1', kind: 'Team', metadata: { name: 'payments' }, spec: { clusterRoles: [{ name: 'teams-viewer' }] } });
    await post('federatedcredentials', {
      apiVersion: 'management.service/v1',
      kind: 'FederatedCredential',
      metadata: { name: 'payments-main' },
      spec: { issuer: issuer.url, audiences: ['teamkeys'], claims: { repository_id: '1001', ref: 'refs/heads/main' }, team: 'payments', scope: { roles: [{ role: 'cli' }] } },
    });
    await post('ownedaccesskeys', { apiVersion: 'management.service/v1', kind: 'OwnedAccessKey', metadata: { name: 'deploy' }, spec: { team: 'payments', type: 'User' } });
    // Signed before timing: signing is the issuer's work, not the server's. They live 300 s.
    const tokens = await Promise.all(Array.from({ length: n + warm }, () => issuer.token()));
    const exchange = async (token: string) => {
      const res = await fetch(`${new URL(served.url).origin}/auth/token`, {
        method: 'POST',
        dispatcher,
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange', subject_token: token, subject_token_type: 'urn:ietf:params:oauth:token-type:id_token' }).toString(),
      });
      const body = await res.text();
      if (res.status !== 200) throw new Error(`exchange: ${res.status} ${body}`);
    };
    const get = async () => {
      const res = await fetch(`${api}/ownedaccesskeys/deploy`, { dispatcher, headers: admin });
      await res.text();
      if (res.status !== 200) throw new Error(`GET: ${res.status}`);
    };
    // Warm: discovery, the JWKS, the JIT of both paths.
    for (const t of tokens.slice(0, warm)) await exchange(t);
    for (let i = 0; i < warm; i++) await get();
    const pid = served.process.pid!;
    const time = async (one: (i: number) => Promise<void>) => {
      const cpu0 = cpuSeconds(pid);
      const t0 = performance.now();
      for (let i = 0; i < n; i++) await one(i);
      return { cpuMs: ((cpuSeconds(pid) - cpu0) * 1000) / n, wallMs: (performance.now() - t0) / n };
    };
    const g = await time(() => get());
    const e = await time((i) => exchange(tokens[warm + i]!));
    const jwks = issuer.jwksFetches();
    return figure({
      name: 'federation.exchange',
      value: Number(e.cpuMs.toFixed(2)),
      unit: 'ms server CPU',
      anchor: 'one GET of a key, same server and run (server CPU per request)',
      anchorValue: Number(Math.max(g.cpuMs, 0.01).toFixed(2)),
      target: 10,
      better: 'lower',
      notes: `${n} of each, one at a time over one keep-alive TLS connection to \`teamkeys serve\` (memory store); the issuer's keys cached (JWKS fetched ${jwks} time(s) for ${n + warm} exchanges); wall per request: exchange ${e.wallMs.toFixed(1)} ms, GET ${g.wallMs.toFixed(1)} ms (ratio ${(e.wallMs / g.wallMs).toFixed(1)})`,
    });
  } finally {
    await dispatcher.close();
    await served.stop();
    await issuer.close();
    tmp.cleanup();
  }
}
