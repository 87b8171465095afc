/** A loopback stand-in for GitHub's published secret scanning keys: tests never reach api.github.com. */
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface GitHubKeysServer {
  /** Where the server fetches the keys (serve's --github-secret-scanning-keys-url). */
  url: string;
  /** The private key of `k1`, to sign alerts with. */
  privateKey: KeyObject;
  close(): Promise<void>;
}

/** Publishes one key, `k1`, answering each fetch after `delayMs`. */
export async function startGitHubKeysServer(delayMs = 0): Promise<GitHubKeysServer> {
  const github = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const published = JSON.stringify({ public_keys: [{ key_identifier: 'k1', key: github.publicKey.export({ type: 'spki', format: 'pem' }) }] });
  const server = createServer((_req, res) => void setTimeout(() => res.writeHead(200, { 'Content-Type': 'application/json' }).end(published), delayMs));
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/keys`,
    privateKey: github.privateKey,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}
