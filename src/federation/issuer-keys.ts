/**
 * The signing keys of each trusted issuer, found through its discovery document and fetched with
 * jose's remote JWKS (cached; refetched on an unknown kid, at most once per cooldown). Only issuers
 * a FederatedCredential names are ever fetched, so a token naming any issuer costs no request.
 */
import { createLocalJWKSet, createRemoteJWKSet, customFetch, errors as joseErrors, type JWTVerifyGetKey, type RemoteJWKSet } from 'jose';
import { Agent, fetch as undiciFetch } from 'undici';

/** How long one request to an issuer may take. */
const issuerTimeoutMs = 5_000;
/** How long a discovery document is kept before it is read again. */
const discoveryMaxAgeMs = 3600_000;
/**
 * How long a failed discovery is remembered: exchanges meanwhile are answered 503 at once rather
 * than each making the server ask an issuer that is down again (a review found every anonymous
 * exchange naming a trusted issuer then cost an outbound request of up to 5 s).
 */
const failureRetryMs = 30_000;
/** Issuers kept at once: rules name few; this bounds the memory should they name many. */
const maxIssuers = 256;
/**
 * The most an issuer's discovery document or key set may weigh (GitHub's are about 2 KB). Any
 * user may write a rule naming an issuer of their own, and one unsigned token naming it makes the
 * server fetch from it: read whole, a 400 MB document took the server from 137 MB to 1.7 GB (found
 * by a review).
 */
export const maxIssuerBodyBytes = 256 * 1024;

export interface IssuerKeysOptions {
  /** PEM certificates to trust for issuers besides the system's (a private CI's CA). */
  ca?: Buffer | string;
  /** jose's cooldown between JWKS fetches caused by an unknown kid. */
  cooldownMs?: number;
  now?: () => number;
}

interface Entry {
  keys: Promise<JWTVerifyGetKey>;
  at: number;
  failed?: boolean;
}

export class IssuerKeys {
  private readonly entries = new Map<string, Entry>();
  private readonly fetch: typeof globalThis.fetch;
  private readonly now: () => number;
  private readonly cooldownMs: number | undefined;

  constructor(opts: IssuerKeysOptions = {}) {
    this.cooldownMs = opts.cooldownMs;
    const dispatcher = new Agent({ connect: { ...(opts.ca ? { ca: opts.ca } : {}), timeout: issuerTimeoutMs }, headersTimeout: issuerTimeoutMs, bodyTimeout: issuerTimeoutMs });
    this.fetch = ((url: string, init?: object) => boundedFetch(url, { ...(init ?? {}), dispatcher } as Parameters<typeof undiciFetch>[1])) as unknown as typeof globalThis.fetch;
    this.now = opts.now ?? (() => Date.now());
  }

  /** The key resolver of an issuer; a failed discovery is tried again once `failureRetryMs` has passed. */
  keysOf(issuer: string): Promise<JWTVerifyGetKey> {
    const known = this.entries.get(issuer);
    if (known && this.now() - known.at < (known.failed ? failureRetryMs : discoveryMaxAgeMs)) {
      // Least recently used goes first: issuers named by many rules of no use cannot push out the
      // ones exchanges use (a review cycled 260 issuers through the 256 places).
      this.entries.delete(issuer);
      this.entries.set(issuer, known);
      return known.keys;
    }
    if (!known && this.entries.size >= maxIssuers) this.entries.delete(this.entries.keys().next().value!);
    const keys = this.discover(issuer);
    const entry: Entry = { keys, at: this.now() };
    // A refreshed issuer moves to the back too, as a used one does above.
    this.entries.delete(issuer);
    this.entries.set(issuer, entry);
    keys.catch(() => {
      entry.failed = true;
      entry.at = this.now();
    });
    return keys;
  }

  private async discover(issuer: string): Promise<JWTVerifyGetKey> {
    const url = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    const res = await this.fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(issuerTimeoutMs) });
    if (res.status !== 200) throw new Error(`the issuer's discovery document answered ${res.status}`);
    const doc = (await res.json()) as { issuer?: unknown; jwks_uri?: unknown };
    // OpenID Connect Discovery 4.3: the document must name the issuer it was fetched for.
    if (doc.issuer !== issuer) throw new Error("the issuer's discovery document names another issuer");
    if (typeof doc.jwks_uri !== 'string' || !doc.jwks_uri.startsWith('https://')) throw new Error("the issuer's discovery document names no https jwks_uri");
    const remote = createRemoteJWKSet(new URL(doc.jwks_uri), { timeoutDuration: issuerTimeoutMs, ...(this.cooldownMs !== undefined ? { cooldownDuration: this.cooldownMs } : {}), [customFetch]: this.fetch as never });
    return this.rememberingFailures(remote);
  }

  /**
   * The key set, with a failed fetch remembered for failureRetryMs as a failed discovery is: jose
   * keeps no memory of one, so each anonymous exchange naming the issuer fetched its JWKS again
   * while it was down (a review counted 11 fetches for 11 tokens). A key the set lacks is no failure.
   */
  private rememberingFailures(remote: RemoteJWKSet): JWTVerifyGetKey {
    let failedAt: number | undefined;
    return async (header, token) => {
      if (failedAt !== undefined && this.now() - failedAt < failureRetryMs) {
        // Keys fetched before and still fresh keep serving: one failed refetch (an unknown kid
        // anyone can put in a token) must not refuse the tokens those keys verify (found by a review).
        const cached = remote.fresh ? remote.jwks() : undefined;
        if (cached) return createLocalJWKSet(cached)(header, token);
        throw new Error("the issuer's keys could not be fetched a moment ago; not asked again yet");
      }
      try {
        return await remote(header, token);
      } catch (err) {
        if (!(err instanceof joseErrors.JWKSNoMatchingKey || err instanceof joseErrors.JWKSMultipleMatchingKeys)) failedAt = this.now();
        throw err;
      }
    };
  }
}

/** An issuer's answer read whole only up to maxIssuerBodyBytes: a longer one is cut off and refused. */
async function boundedFetch(url: string, init: Parameters<typeof undiciFetch>[1]): Promise<Response> {
  const res = await undiciFetch(url, init);
  const tooLarge = () => new Error(`the issuer's answer from ${new URL(url).origin} is larger than ${maxIssuerBodyBytes} bytes`);
  if (Number(res.headers.get('content-length') ?? 0) > maxIssuerBodyBytes) {
    await res.body?.cancel();
    throw tooLarge();
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  // Leaving the loop by a throw cancels the rest of the body.
  for await (const chunk of res.body ?? []) {
    size += chunk.byteLength;
    if (size > maxIssuerBodyBytes) throw tooLarge();
    chunks.push(chunk);
  }
  const empty = res.status === 204 || res.status === 205 || res.status === 304;
  return new Response(empty ? null : Buffer.concat(chunks), { status: res.status, statusText: res.statusText, headers: [...res.headers] });
}
