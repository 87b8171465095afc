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

/** What the request asks to impersonate, or undefined when it sends no Impersonate-* header. */
export function impersonationAsked(req: IncomingMessage): ImpersonationAsked | undefined {
  const headers = req.headersDistinct;
  const names = Object.keys(headers).filter((h) => h.startsWith('impersonate-'));
  if (names.length === 0) return undefined;
  const extra: Record<string, string[]> = {};
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
