/** The opaque `continue` token of a paged list: the revision the list is read at and the last key. */
import { badRequest } from '../api/errors.js';

/** The revision of a token that goes on at the current state (kube's -1), handed out with a 410. */
export const latest = -1;

interface Token {
  v: 'teamkeys/v1';
  rv: number;
  start: string;
}

export function encodeContinue(revision: number, after: string): string {
  const token: Token = { v: 'teamkeys/v1', rv: revision, start: after };
  return Buffer.from(JSON.stringify(token)).toString('base64url');
}

/** Where a token goes on: its revision (undefined: the current state) and the last key it returned. */
export function decodeContinue(token: string, prefix: string): { revision: number | undefined; after: string } {
  const invalid = (why: string) => badRequest(`continue key is not valid: ${why}`);
  if (!/^[A-Za-z0-9_-]+={0,2}$/.test(token)) throw invalid('not a base64 token');
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
  } catch {
    throw invalid('not a token this server issued');
  }
  const t = parsed as Partial<Token>;
  if (t?.v !== 'teamkeys/v1' || typeof t.start !== 'string' || !Number.isSafeInteger(t.rv) || t.rv! < latest) {
    throw invalid('not a token this server issued');
  }
  if (!t.start.startsWith(prefix)) throw invalid('the token belongs to another resource');
  return { revision: t.rv === latest ? undefined : t.rv!, after: t.start };
}
