/**
 * A stand-in for GitHub's Actions secrets API on 127.0.0.1: it holds a real libsodium key pair,
 * hands out the public key, and opens every sealed secret it is sent, as GitHub does.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import sodium from 'libsodium-wrappers';

export interface GitHubStandIn {
  url: string;
  token: string;
  /** Decrypted values by `owner/repo/NAME`. */
  secrets: Map<string, string>;
  /** Every request, as `METHOD path`. */
  requests: string[];
  /** When set, PUTs of a secret answer this status instead of storing it. */
  failPutWith?: number;
  close(): Promise<void>;
}

export async function startGitHubStandIn(): Promise<GitHubStandIn> {
  await sodium.ready;
  const pair = sodium.crypto_box_keypair();
  const keyId = '568250167242549743';
  const token = 'ghs_standin0123456789';
  const standIn: Omit<GitHubStandIn, 'url' | 'close'> = { token, secrets: new Map(), requests: [] };
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      const path = req.url ?? '';
      standIn.requests.push(`${req.method} ${path}`);
      const reply = (code: number, value?: object) => {
        res.writeHead(code, { 'Content-Type': 'application/json' });
        res.end(value ? JSON.stringify(value) : undefined);
      };
      if (req.headers.authorization !== `Bearer ${token}`) return reply(401, { message: 'Bad credentials' });
      const m = path.match(/^\/repos\/([^/]+)\/([^/]+)\/actions\/secrets\/([^/]+)$/);
      if (req.method === 'GET' && m?.[3] === 'public-key') return reply(200, { key_id: keyId, key: sodium.to_base64(pair.publicKey, sodium.base64_variants.ORIGINAL) });
      if (req.method === 'PUT' && m) {
        if (standIn.failPutWith) return reply(standIn.failPutWith, { message: standIn.failPutWith === 403 ? 'Resource not accessible by integration' : 'Server Error' });
        const { encrypted_value, key_id } = JSON.parse(body) as { encrypted_value: string; key_id: string };
        if (key_id !== keyId) return reply(422, { message: 'Bad key_id' });
        const opened = sodium.crypto_box_seal_open(sodium.from_base64(encrypted_value, sodium.base64_variants.ORIGINAL), pair.publicKey, pair.privateKey);
        const name = `${m[1]}/${m[2]}/${m[3]}`;
        const existed = standIn.secrets.has(name);
        standIn.secrets.set(name, sodium.to_string(opened));
        return reply(existed ? 204 : 201);
      }
      return reply(404, { message: 'Not Found' });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return Object.assign(standIn, {
    url,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
