/** What to tell a user whose request got no answer: the cause in their terms, and the fix. */
import type { Status } from '../api/errors.js';

const untrusted = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
]);

function advice(err: NodeJS.ErrnoException, url: URL, trustsCa: boolean): string {
  const code = err.code ?? '';
  if (untrusted.has(code)) {
    return trustsCa
      ? "its certificate is not signed by the --ca-file given: give the server's own certificate or its CA"
      : "its certificate is not trusted: give --ca-file with the server's certificate or CA (for teamkeys serve's self-signed one, --ca-file .teamkeys/tls/cert.pem)";
  }
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return `its certificate is not valid for ${url.hostname}: use a host name the certificate names in --server`;
  if (code === 'CERT_HAS_EXPIRED') return 'its certificate has expired: renew the server certificate';
  if (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || code === 'EPROTO') return 'it does not speak TLS: use http:// in --server (or serve HTTPS)';
  if (code === 'ECONNRESET' && url.protocol === 'http:') return 'it closed the connection without an answer: if it serves HTTPS (teamkeys serve does by default), use https:// in --server';
  if (code === 'ECONNREFUSED') return 'connection refused: is the server running, and are the host and port in --server right?';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return `the host ${url.hostname} is unknown: check --server`;
  return err.message;
}

/** The Status for a request that got no HTTP answer (ClientError with fromServer false). */
export function connectionFailure(err: NodeJS.ErrnoException, url: URL, trustsCa: boolean): Status {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', code: 503, reason: 'ServiceUnavailable', message: `cannot reach ${url.origin}: ${advice(err, url, trustsCa)}` };
}
