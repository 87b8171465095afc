/** The Impersonate-* headers of a request, read as kube-apiserver reads them (auth/impersonation.ts decides). */
import type { IncomingMessage } from 'node:http';
import { badRequest } from '../../api/errors.js';
import type { ImpersonationAsked } from '../../auth/impersonation.js';

const extraPrefix = 'impersonate-extra-';

/** One header's value; several different ones are refused rather than one picked. */
function single(values: string[] | undefined, header: string): string | undefined {
  const distinct = [...new Set(values ?? [])];
  if (distinct.length > 1) throw badRequest(`${header} may be given once`);
  return distinct[0] || undefined;
}

/**
 * The Impersonate-* headers by lowercased name, each with every value sent, as `headersDistinct`
 * has them; undefined when there is none (nearly every request). Read from the raw pairs: Node builds
 * `headersDistinct` for all of a request's headers on first use, a cost every request paid for none.
 */
export function impersonateHeaders(raw: string[]): Record<string, string[]> | undefined {
  let found: Record<string, string[]> | undefined;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    // 'i' or 'I': the cheap test first, then the whole prefix in any case.
    if ((name.charCodeAt(0) | 0x20) !== 0x69 || name.length < 12 || name.slice(0, 12).toLowerCase() !== 'impersonate-') continue;
    const key = name.toLowerCase();
    found ??= Object.create(null) as Record<string, string[]>;
    (found[key] ??= []).push(raw[i + 1]!);
  }
  return found;
}

/** What the request asks to impersonate, or undefined when it sends no Impersonate-* header. */
export function impersonationAsked(req: IncomingMessage): ImpersonationAsked | undefined {
  const headers = impersonateHeaders(req.rawHeaders);
  if (headers === undefined) return undefined;
  const names = Object.keys(headers);
  // No prototype: an extra named __proto__ or constructor is a key like any other (it was a 500).
  const extra = Object.create(null) as Record<string, string[]>;
  for (const name of names.filter((h) => h.startsWith(extraPrefix))) {
    let key: string;
    try {
      // kube percent-encodes what a header name cannot carry (Impersonate-Extra-example.com%2fscope).
      key = decodeURIComponent(name.slice(extraPrefix.length));
    } catch {
      throw badRequest(`header ${name}: malformed percent-encoding`);
    }
    extra[key] = [...(extra[key] ?? []), ...(headers[name] ?? [])];
  }
  const user = single(headers['impersonate-user'], 'Impersonate-User');
  const uid = single(headers['impersonate-uid'], 'Impersonate-Uid');
  const groups = [...new Set((headers['impersonate-group'] ?? []).filter((g) => g !== ''))];
  return { ...(user !== undefined ? { user } : {}), groups, ...(uid !== undefined ? { uid } : {}), extra };
}
