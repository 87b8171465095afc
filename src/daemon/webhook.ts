/** GitHub's webhook signature: X-Hub-Signature-256 = sha256=HMAC-SHA256(secret, body), compared in constant time. */
import { createHmac, timingSafeEqual } from 'node:crypto';

export function signatureValid(secret: string, body: Buffer, header: string | undefined): boolean {
  if (!header?.startsWith('sha256=')) return false;
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(body).digest('hex')}`);
  const given = Buffer.from(header);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export function sign(secret: string, body: Buffer | string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}
