/**
 * The one spelling of a request's path. kube-apiserver routes and authorizes the same decoded,
 * cleaned path; here the router (find-my-way) decodes on its own, so a raw URL compared by one
 * layer and a decoded one used by another let `/kubernetes/%6danagement/...` past authentication.
 * So the URL is rewritten before routing (fastify's rewriteUrl): decoded once, `//`, `.` and `..`
 * resolved, no trailing slash, then each segment encoded again, so that what the router decodes is
 * exactly this path. Authentication and authorization read the same path (request-gate.ts).
 */

/** The decoded, cleaned path of a raw request target, or undefined when its percent-encoding is malformed. */
export function canonicalPath(rawPath: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(rawPath);
  } catch {
    return undefined;
  }
  const out: string[] = [];
  // Decoded once: `%2F` separates segments as `/` does (as in kube, which splits the decoded path).
  for (const segment of decoded.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') out.pop();
    else out.push(segment);
  }
  return `/${out.join('/')}`;
}

/** The path part of a request target (before `?`) and the rest. */
function splitTarget(url: string): [string, string] {
  const q = url.indexOf('?');
  return q < 0 ? [url, ''] : [url.slice(0, q), url.slice(q)];
}

/**
 * A path already canonical whose segments encodeURIComponent leaves as they are: no `%`, no empty,
 * `.` or `..` segment, no trailing slash, only unreserved characters. canonicalUrl would give it
 * back unchanged (test/server/canonical-path.test.ts checks that against the full computation).
 */
const plainCanonical = /^(?:\/(?!\.\.?(?:\/|$))[A-Za-z0-9\-_.!~*'()]+)+$/;

/** Where canonicalUrl leaves the path it computed, on the raw request, so the gate need not decode it again. */
const decided = Symbol('teamkeys.canonicalPath');
type RawRequest = { url?: string; [decided]?: string };

/** The canonical path of a request (the one canonicalUrl routed it by), or undefined when its encoding is malformed. */
export function pathOf(raw: RawRequest): string | undefined {
  return raw[decided] ?? canonicalPath(splitTarget(raw.url ?? '/')[0]);
}

/**
 * The request target the router sees: the canonical path, each segment encoded so the router's
 * decoding gives it back unchanged, and the query as sent. A malformed encoding is left as sent:
 * the router refuses it (400) before anything else runs.
 */
export function canonicalUrl(raw: RawRequest): string {
  const url = raw.url ?? '/';
  const [path, query] = splitTarget(url);
  // Nearly every request: nothing to decode, resolve or encode; the path is its own canonical form.
  if (plainCanonical.test(path)) {
    raw[decided] = path;
    return url;
  }
  const canonical = canonicalPath(path);
  if (canonical === undefined) return url;
  raw[decided] = canonical;
  const encoded = canonical
    .split('/')
    .map((s) => encodeURIComponent(s))
    .join('/');
  return `${encoded}${query}`;
}
