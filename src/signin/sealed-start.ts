/**
 * A sign-in started at the server travels sealed, not in this process's memory: what the callback
 * needs (the CLI's request, the server's PKCE verifier and nonce, the callback URL) is sealed with
 * AES-256-GCM under the server's encryption key (api/field-cipher.ts) into a cookie of the browser
 * that started it, bound to the state sent to the provider and lapsing after a few minutes. So a
 * flood of /auth/login holds nothing and evicts nothing, and any replica sharing the key finishes a
 * sign-in another started: no sticky sessions (docs/postgres.md).
 */
import type { FieldCipher } from '../api/field-cipher.js';

/** The AES-GCM additional data: a sealed start opens only as one (never as another sealed field). */
const context = 'teamkeys sign-in start v1';
/**
 * The cookie's name carries the start of the state, so sign-ins begun in several tabs do not
 * overwrite each other. The server's states are base64url; a callback's may be anything, and only
 * those characters may reach a Set-Cookie name (`;` or `=` would add attributes or cookies).
 */
const cookiePrefix = 'teamkeys-signin-';
const cookieName = (state: string) => `${cookiePrefix}${state.slice(0, 16).replace(/[^A-Za-z0-9_-]/g, '_')}`;

export interface SealedCookie {
  /** The Set-Cookie header value. */
  setCookie: string;
}

export class SealedStarts<T extends object> {
  constructor(
    private readonly cipher: FieldCipher,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The cookie holding `value` sealed for `state`; Secure when the browser reached the server over https. */
  seal(state: string, value: T, secure: boolean): SealedCookie {
    const sealed = this.cipher.seal(JSON.stringify({ state, until: this.now() + this.ttlMs, value }), context);
    const attrs = [`Path=/auth`, `Max-Age=${Math.ceil(this.ttlMs / 1000)}`, 'HttpOnly', 'SameSite=Lax', ...(secure ? ['Secure'] : [])];
    return { setCookie: `${cookieName(state)}=${sealed}; ${attrs.join('; ')}` };
  }

  /** The value sealed for `state` in the request's cookies, if there, unexpired and not tampered with. */
  open(state: unknown, cookieHeader: string | undefined): T | undefined {
    if (typeof state !== 'string' || state.length < 16 || !cookieHeader) return undefined;
    const name = cookieName(state);
    const raw = cookieHeader.split(';').map((c) => c.trim()).find((c) => c.startsWith(`${name}=`))?.slice(name.length + 1);
    if (!raw) return undefined;
    try {
      const opened = JSON.parse(this.cipher.open(raw, context)) as { state?: unknown; until?: unknown; value?: T };
      return opened.state === state && typeof opened.until === 'number' && opened.until >= this.now() ? opened.value : undefined;
    } catch {
      return undefined;
    }
  }

  /** The Set-Cookie header value that removes the cookie of `state` (the callback takes it once). */
  clear(state: string): string {
    return `${cookieName(state)}=; Path=/auth; Max-Age=0; HttpOnly; SameSite=Lax`;
  }
}
