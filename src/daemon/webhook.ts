/** GitHub's webhook signature: X-Hub-Signature-256 = sha256=HMAC-SHA256(secret, body), compared in constant time. */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

export function signatureValid(secret: string, body: Buffer, header: string | undefined): boolean {
  if (!header?.startsWith('sha256=')) return false;
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(body).digest('hex')}`);
  const given = Buffer.from(header);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export function sign(secret: string, body: Buffer | string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** Whether `Authorization: Bearer <secret>` carries the webhook secret (the daemon's own endpoints without an API behind them). */
export function bearerValid(secret: string, header: string | undefined): boolean {
  if (!header?.startsWith('Bearer ')) return false;
  // Digests first: equal lengths for timingSafeEqual, and no length told by the time taken.
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(header.slice(7)), digest(secret));
}

/**
 * Signed deliveries already acted on, so a replayed one is refused: by its X-GitHub-Delivery id,
 * and by its signature (the id is not signed, so a replay may carry a new one; a signature is the
 * body's, and two real deliveries never share a body). The last `size` deliveries are kept:
 * a replay of an older one triggers one more sync, which is all a delivery can do.
 */
export class DeliveryLog {
  private readonly seen = new Set<string>();
  constructor(private readonly size = 10_000) {}

  /** Why this delivery was received before, or undefined (it is then remembered). */
  replayed(deliveryId: string | undefined, signature: string): string | undefined {
    if (deliveryId && this.seen.has(`id:${deliveryId}`)) return `delivery ${deliveryId} was received before`;
    if (this.seen.has(`sig:${signature}`)) return 'a delivery with this body and signature was received before';
    for (const key of [...(deliveryId ? [`id:${deliveryId}`] : []), `sig:${signature}`]) this.seen.add(key);
    // A Set iterates in insertion order: the oldest go first.
    for (const old of this.seen) {
      if (this.seen.size <= this.size) break;
      this.seen.delete(old);
    }
    return undefined;
  }
}
