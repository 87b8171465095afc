/**
 * Whether a verified job token's claims satisfy a FederatedCredential's spec.claims: every entry
 * must match, exactly or by a glob where `*` is any run of characters. Pure; table-tested.
 */
import type { JWTPayload } from 'jose';

/** Events whose tokens a fork can cause on GitHub: matched only by a rule whose event_name names the event exactly. */
export const forkableEvents = ['pull_request', 'pull_request_target'];

/** A claim's value as a rule compares it: strings, and numbers or booleans as their text; nothing else. */
function claimText(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return undefined;
}

/** Glob match with `*` only: linear, no regular expression built from the rule. */
export function globMatch(pattern: string, text: string): boolean {
  const parts = pattern.split('*');
  if (parts.length === 1) return pattern === text;
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  if (text.length < first.length + last.length || !text.startsWith(first) || !text.endsWith(last)) return false;
  let at = first.length;
  const end = text.length - last.length;
  for (const part of parts.slice(1, -1)) {
    const found = text.indexOf(part, at);
    if (found < 0 || found + part.length > end) return false;
    at = found + part.length;
  }
  return true;
}

/** Why the claims do not satisfy the rule (naming the claim, never the value it wants), or undefined. */
export function claimsMismatch(claims: Readonly<Record<string, string>>, payload: JWTPayload): string | undefined {
  for (const name of Object.keys(claims).sort()) {
    const have = claimText(payload[name]);
    if (have === undefined) return `the token has no claim ${JSON.stringify(name)} the rule requires`;
    if (!globMatch(claims[name]!, have)) return `the token's claim ${JSON.stringify(name)} does not match the rule`;
  }
  const event = claimText(payload.event_name);
  // Named exactly: `event_name: "*"` (or `pull_request*`) matched above, yet is no decision to
  // trust forks (found by a review).
  if (event !== undefined && forkableEvents.includes(event) && (!Object.hasOwn(claims, 'event_name') || claims.event_name!.includes('*'))) {
    return `the token is from a ${event} event, which a fork can start: only a rule whose event_name names that event exactly trusts it`;
  }
  return undefined;
}
