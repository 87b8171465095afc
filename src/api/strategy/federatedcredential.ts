import type { FieldError } from '../field-errors.js';
import type { ResourceInfo } from '../resources.js';
import { holderNameErrors } from '../names.js';
import { ownerPinMissing } from '../public-issuers.js';
import { isJsonMap, type KubeObject } from '../types.js';
import type { Strategy } from './strategy.js';

/**
 * Claims the exchange checks itself (signature, issuer, audience, lifetime, replay): a rule may not
 * restate them in spec.claims, where a glob would read as if it loosened those checks.
 */
export const registeredClaims = ['iss', 'aud', 'exp', 'nbf', 'iat', 'jti'] as const;

/** Trust rules for CI job tokens: an https issuer, exactly one of team and user, claims that pin something. */
export function federatedCredentialStrategy(info: ResourceInfo): Strategy {
  return {
    info,
    prepareForCreate() {},
    validate: (obj, old) => [...validateRule(obj), ...validateOwnerPin(obj, old), ...holderNameErrors(info.kind, obj, old)],
    validateUpdate: () => [],
  };
}

function validateRule(obj: KubeObject): FieldError[] {
  if (!isJsonMap(obj.spec)) return [];
  const spec = obj.spec;
  return [...validateIssuer(spec.issuer), ...validateSubject(spec), ...validateClaims(spec.claims)];
}

function validateIssuer(issuer: unknown): FieldError[] {
  if (typeof issuer !== 'string') return [];
  const bad = (detail: string): FieldError[] => [{ type: 'Invalid', field: 'spec.issuer', value: issuer, detail }];
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    return bad('must be an https URL');
  }
  if (url.protocol !== 'https:') return bad('must be an https URL: the token is trusted for what its issuer serves, which plain http lets anyone on the path change');
  if (url.username || url.password || url.search || url.hash) return bad('must be an https URL without credentials, query or fragment (the token\'s iss claim, as the issuer writes it)');
  return [];
}

function validateSubject(spec: Record<string, unknown>): FieldError[] {
  const set = (['team', 'user'] as const).filter((s) => typeof spec[s] === 'string' && spec[s] !== '');
  if (set.length === 1) return [];
  if (set.length === 0) return [{ type: 'Required', field: 'spec.team', detail: 'exactly one of spec.team or spec.user must be set: whom the minted key acts for' }];
  return [{ type: 'Invalid', field: 'spec.user', value: spec.user, detail: 'exactly one of spec.team or spec.user may be set, found spec.team, spec.user' }];
}

function validateClaims(claims: unknown): FieldError[] {
  if (!isJsonMap(claims)) return [];
  const errs: FieldError[] = [];
  for (const [name, pattern] of Object.entries(claims)) {
    if (name === '') errs.push({ type: 'Invalid', field: 'spec.claims', value: name, detail: 'a claim name may not be empty' });
    else if ((registeredClaims as readonly string[]).includes(name)) {
      errs.push({ type: 'Forbidden', field: `spec.claims.${name}`, detail: `${name} is checked by the exchange itself (spec.issuer, spec.audiences, the token's lifetime and its single use), not by spec.claims` });
    } else if (pattern === '') errs.push({ type: 'Invalid', field: `spec.claims.${name}`, value: pattern, detail: 'may not be empty: a claim is matched exactly, or by a glob with *' });
  }
  // A rule that pins nothing trusts every job the issuer signs for the audience (every repository on GitHub).
  const pins = Object.values(claims).some((p) => typeof p === 'string' && p.replace(/\*/g, '') !== '');
  if (errs.length === 0 && !pins) errs.push({ type: 'Required', field: 'spec.claims', detail: 'must pin at least one claim to a value other than *: without one, every job the issuer signs for the audience would match (docs/federated.md lists the claims to pin)' });
  return errs;
}

/**
 * A rule for a public issuer pins whose jobs these are (public-issuers.ts). Judged where the
 * issuer or the claims change: a rule stored before the check keeps its other updates (a label, a
 * finalizer's removal) writable, as other new rules are ratcheted; the exchange refuses it.
 */
function validateOwnerPin(obj: KubeObject, old: KubeObject | undefined): FieldError[] {
  if (!isJsonMap(obj.spec)) return [];
  const spec = obj.spec;
  const was = old && isJsonMap(old.spec) ? old.spec : undefined;
  if (was && JSON.stringify([was.issuer, was.claims]) === JSON.stringify([spec.issuer, spec.claims])) return [];
  const missing = typeof spec.issuer === 'string' && isJsonMap(spec.claims) ? ownerPinMissing(spec.issuer, spec.claims) : undefined;
  return missing ? [{ type: 'Required', field: 'spec.claims', detail: `${missing} (docs/federated.md lists the claims to pin)` }] : [];
}
