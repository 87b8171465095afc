/**
 * Whether the server still accepts a cached Login key, asked only when kubectl runs the credential
 * plugin a second time in one process: client-go does that when the server answered 401 to the key
 * the plugin gave it, and the plugin otherwise handed the same dead key out again on every command
 * until its local expiry (a key revoked, deleted, or refused at refresh). Loaded on that path only.
 */
import { readFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { apiRoot } from '../api/resources.js';

/** `refused`, with the server's reason; `accepted`; or `unknown` (no answer: the key is kept). */
export type KeyVerdict = { verdict: 'refused'; message: string } | { verdict: 'accepted' } | { verdict: 'unknown' };

const reviewPath = '/apis/authentication.k8s.io/v1/selfsubjectreviews';

/** Asks the server who the key is (a SelfSubjectReview, which any valid key may create). */
export function checkKey(server: string, key: string, caFile: string | undefined, timeoutMs = 10_000): Promise<KeyVerdict> {
  const target = new URL(`${apiRoot(server)}${reviewPath}`);
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
  const body = JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' });
  let ca: Buffer | undefined;
  try {
    ca = caFile ? readFileSync(caFile) : undefined;
  } catch {
    return Promise.resolve({ verdict: 'unknown' });
  }
  return new Promise((resolve) => {
    const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), 'User-Agent': 'teamkeys/credential' };
    const req = send(target, { method: 'POST', headers, ...(ca ? { ca } : {}), timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        if (res.statusCode !== 401) return resolve(res.statusCode === 201 || res.statusCode === 200 ? { verdict: 'accepted' } : { verdict: 'unknown' });
        let message = 'Unauthorized';
        try {
          const status = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { message?: unknown };
          if (typeof status.message === 'string' && status.message !== '') message = status.message.slice(0, 300);
        } catch {
          // the status line says enough
        }
        resolve({ verdict: 'refused', message });
      });
      res.on('error', () => resolve({ verdict: 'unknown' }));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve({ verdict: 'unknown' }));
    req.end(body);
  });
}
