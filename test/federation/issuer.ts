/**
 * A job-token issuer for tests: HTTPS on loopback with a certificate of its own (the server trusts
 * it as --federation-ca-file would), a discovery document, a JWKS, and RS256 tokens signed with
 * jose carrying the claims each test chooses. `rotate()` replaces the signing key (the old one leaves
 * the JWKS); `foreignToken()` is signed by a key the JWKS never held.
 */
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from 'jose';
import { generate } from 'selfsigned';

interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  jwk: Record<string, unknown>;
}

async function signingKey(): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
  const kid = randomUUID();
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } };
}

export interface TestIssuer {
  url: string;
  ca: string;
  /** Requests the JWKS endpoint answered. */
  jwksFetches: () => number;
  /** Requests the discovery document answered. */
  discoveryFetches: () => number;
  /** Answers the discovery document 503 while true. */
  failDiscovery(failing: boolean): void;
  /** Answers the JWKS 500 while true. */
  failJwks(failing: boolean): void;
  /** Pads the discovery document or the JWKS with this many bytes of a field nobody reads, sent in chunks without a length (0: none). */
  bloat(what: 'discovery' | 'jwks', bytes: number): void;
  /** A token with GitHub-like defaults, these claims over them, expiring in `ttl` seconds from `now`. */
  token(claims?: JWTPayload, opts?: { now?: Date; ttl?: number }): Promise<string>;
  foreignToken(claims?: JWTPayload, opts?: { now?: Date; ttl?: number }): Promise<string>;
  rotate(): Promise<void>;
  close(): Promise<void>;
}

export const githubClaims = (over: JWTPayload = {}): JWTPayload => ({
  sub: 'repo:acme/app:ref:refs/heads/main',
  repository: 'acme/app',
  repository_id: '1001',
  repository_owner: 'acme',
  repository_owner_id: '2002',
  ref: 'refs/heads/main',
  workflow: 'ci',
  run_id: '42',
  event_name: 'push',
  ...over,
});

export async function startIssuer(): Promise<TestIssuer> {
  const pems = await generate([{ name: 'commonName', value: '127.0.0.1' }], {
    keyType: 'ec',
    curve: 'P-256',
    extensions: [
      { name: 'basicConstraints', cA: true },
      { name: 'keyUsage', digitalSignature: true, keyCertSign: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] },
    ],
  });
  let current = await signingKey();
  const foreign = await signingKey();
  let fetches = 0;
  let discoveries = 0;
  let discoveryFails = false;
  const padding = { discovery: 0, jwks: 0 };
  let jwksFails = false;
  /** A JSON object sent in 64 KiB chunks, padded as bloat() asked: no Content-Length, so only the reader can bound it. */
  const sendPadded = (res: import('node:http').ServerResponse, body: Record<string, unknown>, pad: number) => {
    if (pad === 0) return res.end(JSON.stringify(body));
    const text = JSON.stringify(body);
    res.write(`${text.slice(0, -1)},"padding":"`);
    const chunk = 'x'.repeat(64 * 1024);
    let left = pad;
    const more = () => {
      while (left > 0) {
        const n = Math.min(left, chunk.length);
        left -= n;
        if (!res.write(chunk.slice(0, n))) return void res.once('drain', more);
      }
      res.end('"}');
    };
    res.on('close', () => (left = 0));
    more();
  };
  let url = '';
  const server: Server = createServer({ key: pems.private, cert: pems.cert }, (req, res) => {
    res.setHeader('Content-Type', 'application/json');
    if (req.url === '/.well-known/openid-configuration') discoveries++;
    if (req.url === '/.well-known/openid-configuration' && discoveryFails) {
      res.statusCode = 503;
      return res.end('{}');
    }
    if (req.url === '/.well-known/openid-configuration') return sendPadded(res, { issuer: url, jwks_uri: `${url}/jwks`, id_token_signing_alg_values_supported: ['RS256'] }, padding.discovery);
    if (req.url === '/jwks') {
      fetches++;
      if (jwksFails) {
        res.statusCode = 500;
        return res.end('{}');
      }
      return sendPadded(res, { keys: [current.jwk] }, padding.jwks);
    }
    res.statusCode = 404;
    res.end('{}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const sign = (key: SigningKey) => async (claims: JWTPayload = {}, opts: { now?: Date; ttl?: number } = {}) => {
    const now = Math.floor((opts.now ?? new Date()).getTime() / 1000);
    return new SignJWT({ jti: randomUUID(), ...githubClaims(claims) })
      .setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'JWT' })
      .setIssuer(typeof claims.iss === 'string' ? claims.iss : url)
      .setAudience(claims.aud ?? 'teamkeys')
      .setIssuedAt(now)
      .setNotBefore(now)
      .setExpirationTime(now + (opts.ttl ?? 300))
      .sign(key.privateKey);
  };
  return {
    url,
    ca: pems.cert,
    jwksFetches: () => fetches,
    discoveryFetches: () => discoveries,
    failDiscovery: (failing) => void (discoveryFails = failing),
    bloat: (what, bytes) => void (padding[what] = bytes),
    failJwks: (failing) => void (jwksFails = failing),
    token: (claims, opts) => sign(current)(claims, opts),
    foreignToken: sign(foreign),
    rotate: async () => {
      current = await signingKey();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
