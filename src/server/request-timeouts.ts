/**
 * How long a client has to send its request. A client that dribbles its headers or body holds a
 * connection: it gets this long, then 408. Watches are unaffected: the limit is on receiving the
 * request, not on sending the response. Loads nothing, so `serve --help` can show the default.
 */

/** Time a client has to send its whole request, headers and body. */
export const defaultRequestTimeoutMs = 60_000;

/** Headers must arrive within this (or within the request timeout, when that is shorter). */
export const maxHeadersTimeoutMs = 10_000;

/** Node's server timeouts for a request timeout of `requestTimeout` ms. */
export function requestTimeouts(requestTimeout: number): { requestTimeout: number; headersTimeout: number; connectionsCheckingInterval: number } {
  return {
    requestTimeout,
    headersTimeout: Math.min(maxHeadersTimeoutMs, requestTimeout),
    // How often Node looks for expired requests; its default of 30 s would let them overstay.
    connectionsCheckingInterval: Math.min(1_000, requestTimeout / 2),
  };
}
