/**
 * Login keys: the keys sign-in mints (spec.type Login). What makes one stop working besides the
 * rules every key follows, and what only the sign-in path may write. The identity refresher
 * (src/signin/refresh.ts) writes the markers read here; authentication reads them on every
 * request, so a refused refresh ends the key on every replica (and, with re-authentication per
 * watch, its open watches).
 */
import { isDeepStrictEqual } from 'node:util';
import { isLoginKey } from '../api/key-types.js';
import type { OwnedAccessKey } from '../api/types.js';

export { isLoginKey, loginKeyType } from '../api/key-types.js';

/** Annotation the refresher sets when the provider refuses a refresh (value: the provider's error code). */
export const refusedAnnotation = 'signin.management.service/refresh-refused';
/** Annotation the refresher sets when a refresh could not be made (provider unreachable); removed by the next success. */
export const refreshErrorAnnotation = 'signin.management.service/refresh-error';
const signInAnnotations = [refusedAnnotation, refreshErrorAnnotation];

/** How long a Login key keeps working while its identity cannot be refreshed (the provider unreachable). */
export const defaultIdentityMaxStalenessMs = 24 * 3600_000;

/** Why a Login key may not authenticate at `now`, or undefined (other keys: always undefined). */
export function loginKeyRefusal(key: OwnedAccessKey, now: Date, maxStalenessMs = defaultIdentityMaxStalenessMs): string | undefined {
  if (!isLoginKey(key)) return undefined;
  if (key.metadata.annotations?.[refusedAnnotation] !== undefined) return 'the identity provider refused to refresh this sign-in: run teamkeys login';
  const refreshed = key.spec.identityRefresh ? Date.parse(key.spec.identityRefresh) : NaN;
  if (!Number.isFinite(refreshed)) return 'this sign-in has no identity refresh time: run teamkeys login';
  if (now.getTime() - refreshed > maxStalenessMs) {
    const why = key.metadata.annotations?.[refreshErrorAnnotation];
    return `the identity of this sign-in has not been refreshed since ${key.spec.identityRefresh}${why ? ` (${why})` : ''}, longer than the server allows: run teamkeys login`;
  }
  return undefined;
}

const annotationsOf = (k: OwnedAccessKey | undefined) => signInAnnotations.map((a) => k?.metadata.annotations?.[a]);

/**
 * Why a write through the API may not make or change this key, or undefined: Login keys are made
 * only by signing in, and their identity, refresh time and refresh markers are written only by the
 * server's sign-in path and its refresher. Anyone may otherwise edit (describe, disable) or delete them.
 */
export function loginKeyWriteRefusal(old: OwnedAccessKey | undefined, next: OwnedAccessKey): string | undefined {
  if (!old && isLoginKey(next)) return 'access keys of type Login are made only by signing in (teamkeys login)';
  if (!old) return undefined;
  if (isLoginKey(old) !== isLoginKey(next)) return 'spec.type Login is set only by signing in (teamkeys login)';
  if (!isLoginKey(old)) return undefined;
  if (!isDeepStrictEqual(old.spec.identity, next.spec.identity) || old.spec.identityRefresh !== next.spec.identityRefresh || !isDeepStrictEqual(annotationsOf(old), annotationsOf(next))) {
    return 'the identity of a Login key is written only by signing in and by its refresh from the identity provider';
  }
  return undefined;
}
