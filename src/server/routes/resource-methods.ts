/**
 * What each resource route serves, as its headers can tell before the body is read: the methods
 * of each subresource and the media types of each served method. The handlers in resources.ts
 * refuse the same once the body is read; the route's onRequest refuses it before (a review found
 * bodies of up to 3 MiB read before a 405 or a 415).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { objectBodies, type BodyType } from '../content.js';

const statusMethods: readonly string[] = ['GET', 'PUT', 'PATCH'];
const subresourceMethods: Record<string, readonly string[]> = {
  'teams/accesskeys': ['GET'],
  'ownedaccesskeys/rotation': ['POST'],
  'accessrequests/approval': ['PUT'],
  // Read only: auth/decision.ts says why.
  'accessrequests/status': ['GET'],
};

/** Why a subresource does not serve a method, where a client needs to be told what to do instead. */
const readOnlyWhy: Record<string, string> = {
  'accessrequests/status': 'the server alone writes the status of an AccessRequest: approve or deny it through its approval subresource, end it with DELETE',
};

/** What a 405 of this subresource adds to its message, if anything. */
export const whyNotServed = (plural: string, sub: string): string | undefined => readOnlyWhy[`${plural}/${sub}`];

/** The methods a subresource of `plural` serves, or none where there is no such subresource. */
export const subresourceServes = (plural: string, sub: string): readonly string[] | undefined => subresourceMethods[`${plural}/${sub}`] ?? (sub === 'status' ? statusMethods : undefined);

/**
 * Whether a request has a body to read: a length above zero, or chunks. A DELETE's body is
 * optional and judged only when it is not empty, which chunks do not say before they are read.
 */
const announcesBody = (method: string, headers: IncomingHttpHeaders) =>
  (headers['content-length'] !== undefined && headers['content-length'] !== '0') || (headers['transfer-encoding'] !== undefined && method !== 'DELETE');

/**
 * The media types a served method of a route takes, when the request announces a body; none where
 * it announces none, or where the method is not served (that is a 405 from the handler, not a 415).
 */
export function bodiesBeforeBody(method: string, headers: IncomingHttpHeaders, name: string | undefined, sub: string | undefined): BodyType[] | undefined {
  if (!announcesBody(method, headers)) return undefined;
  if (method === 'DELETE') return sub === undefined ? objectBodies : undefined;
  if (name === undefined) return method === 'POST' ? objectBodies : undefined;
  if (sub === undefined) return method === 'PUT' ? objectBodies : method === 'PATCH' ? ['json-patch', 'merge-patch', 'apply-patch'] : undefined;
  if (sub === 'status') return method === 'PUT' ? objectBodies : method === 'PATCH' ? ['json-patch', 'merge-patch'] : undefined;
  return method === 'POST' || method === 'PUT' ? objectBodies : undefined;
}
