/**
 * RFC 6749 section 5.2 errors, as the token endpoint answers them: a JSON body with `error` and
 * `error_description`. The description says which check failed. That tells a caller who holds no
 * key whether some rule trusts an issuer, whether a rule of a name it guesses does, and, to anyone
 * holding a token the issuer signed, the audiences and the claim names a named rule checks; never
 * a rule's pinned values, team or scope (docs/federated.md, "What a refusal tells").
 */
export type OAuthErrorCode = 'invalid_request' | 'invalid_grant' | 'invalid_target' | 'unsupported_grant_type' | 'temporarily_unavailable' | 'slow_down';

export class OAuthError extends Error {
  constructor(
    readonly status: number,
    readonly error: OAuthErrorCode,
    readonly description: string,
    /** Seconds a 429 asks the client to wait. */
    readonly retryAfter?: number,
  ) {
    super(`${error}: ${description}`);
  }

  body(): { error: OAuthErrorCode; error_description: string } {
    return { error: this.error, error_description: this.description };
  }
}

export const invalidRequest = (d: string) => new OAuthError(400, 'invalid_request', d);
export const invalidGrant = (d: string) => new OAuthError(400, 'invalid_grant', d);
export const invalidTarget = (d: string) => new OAuthError(400, 'invalid_target', d);
