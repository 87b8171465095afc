/**
 * Encryption at rest of sealed fields (identity.connectorData, oidcLogin tokens): AES-256-GCM from
 * node:crypto, in the manner of kube's EncryptionConfiguration: a list of named keys, the first
 * encrypts, every one decrypts, so a new key can be put first and the old one kept until every
 * value has been rewritten. A value is bound to its object and field (GCM additional data), so a
 * ciphertext copied to another object or field does not open.
 */
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';

export interface CipherKey {
  name: string;
  /** 32 bytes. */
  secret: Buffer;
}

const prefix = 'aesgcm:v1:';

export class FieldCipher {
  private readonly byName: Map<string, Buffer>;
  /** sealFixed's IV key, derived from the first key once. */
  private fixedIvKey: Buffer | undefined;

  constructor(private readonly keys: CipherKey[]) {
    if (keys.length === 0) throw new Error('an encryption key list needs at least one key');
    for (const k of keys) if (k.secret.length !== 32) throw new Error(`encryption key "${k.name}" must be 32 bytes`);
    this.byName = new Map(keys.map((k) => [k.name, k.secret]));
  }

  /** A cipher with one random key that lives only in this process (tests, memory: stores). */
  static ephemeral(): FieldCipher {
    return new FieldCipher([{ name: `ephemeral-${randomBytes(4).toString('hex')}`, secret: randomBytes(32) }]);
  }

  /**
   * Each key's name and a fingerprint that identifies it without revealing it (an HMAC of a fixed
   * text under the key), the encrypting key first: what processes sharing a store compare.
   */
  fingerprints(): { name: string; fingerprint: string }[] {
    return this.keys.map((k) => ({ name: k.name, fingerprint: createHmac('sha256', k.secret).update('teamkeys encryption key fingerprint v1').digest('hex').slice(0, 32) }));
  }

  /** `aesgcm:v1:<key name>:<iv>:<tag>:<ciphertext>` (base64), under the first key. */
  seal(plain: string, context: string): string {
    return this.sealWith(randomBytes(12), plain, context);
  }

  /**
   * `seal`, the same text in the same context always giving the same value (its IV an HMAC of
   * both under a key derived from the secret, as SIV does): for values compared as bytes, such as
   * a list page's continue token. An IV repeats only with its text and context, so nothing but
   * that equality is told.
   */
  sealFixed(plain: string, context: string): string {
    const ivKey = (this.fixedIvKey ??= createHmac('sha256', this.keys[0]!.secret).update('teamkeys fixed iv key v1').digest());
    return this.sealWith(createHmac('sha256', ivKey).update(context).update('\0').update(plain).digest().subarray(0, 12), plain, context);
  }

  private sealWith(iv: Buffer, plain: string, context: string): string {
    const { name, secret } = this.keys[0]!;
    const cipher = createCipheriv('aes-256-gcm', secret, iv);
    cipher.setAAD(Buffer.from(context));
    const data = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
    return `${prefix}${name}:${[iv, cipher.getAuthTag(), data].map((b) => b.toString('base64')).join(':')}`;
  }

  /** The plaintext; throws when the value is not ours, its key is unknown, or it was tampered with. */
  open(sealed: string, context: string): string {
    const parts = isSealed(sealed) ? sealed.slice(prefix.length).split(':') : [];
    const secret = this.byName.get(parts[0] ?? '');
    if (parts.length !== 4 || !secret) throw new Error('the value is not sealed under a known encryption key');
    const [iv, tag, data] = parts.slice(1).map((p) => Buffer.from(p, 'base64')) as [Buffer, Buffer, Buffer];
    const decipher = createDecipheriv('aes-256-gcm', secret, iv);
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(data), decipher.final()]).toString('utf8');
  }

  /**
   * The stored form of a value carried over from the previous version: unchanged when sealed under
   * the first key (or under a key this process does not know), re-sealed when under an older key,
   * sealed when it predates encryption.
   */
  reseal(stored: string, context: string): string {
    if (!isSealed(stored)) return this.seal(stored, context);
    const name = stored.slice(prefix.length).split(':')[0];
    if (name === this.keys[0]!.name || !this.byName.has(name ?? '')) return stored;
    return this.seal(this.open(stored, context), context);
  }
}

export const isSealed = (value: string) => value.startsWith(prefix);
