/**
 * Files `teamkeys serve` keeps in its state directory (default .teamkeys/): a self-signed TLS
 * certificate made once and reused (so a kubeconfig keeps trusting it), and a kubeconfig for
 * kubectl, which sends bearer tokens only over TLS.
 */
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import { stringify } from 'yaml';

export interface TlsFiles {
  cert: Buffer;
  key: Buffer;
  certPath: string;
}

async function readIfExists(path: string): Promise<string | undefined> {
  return readFile(path, 'utf8').catch(() => undefined);
}

/** The certificate for these host names and addresses, made on first use and whenever they change. */
export async function selfSignedTls(dir: string, hosts: string[]): Promise<TlsFiles & { created: boolean }> {
  const tlsDir = join(dir, 'tls');
  const certPath = join(tlsDir, 'cert.pem');
  const keyPath = join(tlsDir, 'key.pem');
  const hostsPath = join(tlsDir, 'hosts');
  const wanted = [...new Set(hosts)].sort().join('\n');
  const [cert, key, had] = await Promise.all([readIfExists(certPath), readIfExists(keyPath), readIfExists(hostsPath)]);
  if (cert && key && had === wanted) return { cert: Buffer.from(cert), key: Buffer.from(key), certPath, created: false };
  const altNames = [...new Set(hosts)].map((h) => (isIP(h) ? { type: 7 as const, ip: h } : { type: 2 as const, value: h }));
  const notAfterDate = new Date(Date.now() + 5 * 365 * 24 * 3600 * 1000);
  const made = await generate([{ name: 'commonName', value: 'teamkeys' }], {
    keyType: 'ec',
    curve: 'P-256',
    notAfterDate,
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', digitalSignature: true, keyCertSign: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames },
    ],
  });
  await mkdir(tlsDir, { recursive: true, mode: 0o700 });
  await writeFile(keyPath, made.private, { mode: 0o600 });
  await chmod(keyPath, 0o600);
  await writeFile(certPath, made.cert);
  await writeFile(hostsPath, wanted);
  return { cert: Buffer.from(made.cert), key: Buffer.from(made.private), certPath, created: true };
}

/** A kubeconfig for this server, mode 0600 since it may carry the administrator's key. */
export async function writeKubeconfig(path: string, opts: { url: string; caPem?: Buffer; token?: string }): Promise<void> {
  const cluster: Record<string, string> = { server: opts.url };
  if (opts.caPem) cluster['certificate-authority-data'] = opts.caPem.toString('base64');
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'teamkeys', cluster }],
    contexts: [{ name: 'teamkeys', context: { cluster: 'teamkeys', user: 'teamkeys-admin' } }],
    'current-context': 'teamkeys',
    users: [{ name: 'teamkeys-admin', user: opts.token ? { token: opts.token } : {} }],
  };
  await writeFile(path, stringify(config), { mode: 0o600 });
  await chmod(path, 0o600);
}
