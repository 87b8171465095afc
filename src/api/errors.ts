/** The API layer's one error type, ApiError, and the kube-style Status body it renders to. */
import { aggregateMessage, fieldErrorToCause, type FieldError, type StatusCause } from './field-errors.js';

export type StatusReason =
  | 'BadRequest'
  | 'Unauthorized'
  | 'Forbidden'
  | 'NotFound'
  | 'AlreadyExists'
  | 'Conflict'
  | 'Gone'
  | 'Invalid'
  | 'Expired'
  | 'MethodNotAllowed'
  | 'NotAcceptable'
  | 'UnsupportedMediaType'
  | 'RequestEntityTooLarge'
  | 'TooManyRequests'
  | 'InternalError'
  | 'Timeout'
  | 'ServiceUnavailable';

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  /** kube's ListMeta: set only on a 410 for an expired continue token, with a token to go on from. */
  metadata: { continue?: string };
  status: 'Success' | 'Failure';
  message?: string;
  reason?: StatusReason;
  details?: StatusDetails;
  code: number;
}

/** Names a resource the way kube's messages do: `teams.management.service`. */
export interface GroupResource {
  group: string;
  resource: string;
}

/** Names a kind the way kube's Invalid messages do: `Team.management.service`. */
export interface GroupKind {
  group: string;
  kind: string;
}

export class ApiError extends Error {
  /** The Status's metadata.continue: where an expired paged list may go on, inconsistently. */
  continueToken?: string;

  constructor(
    readonly code: number,
    readonly reason: StatusReason,
    message: string,
    readonly details?: StatusDetails,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  toStatus(): Status {
    const status: Status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: this.continueToken ? { continue: this.continueToken } : {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      code: this.code,
    };
    if (this.details) status.details = this.details;
    return status;
  }
}

const qualified = (gr: GroupResource) => (gr.group ? `${gr.resource}.${gr.group}` : gr.resource);

/** A read's 404 as undefined (for `.catch`); any other failure (the store out of reach) stays an error. */
export function unlessNotFound(err: unknown): undefined {
  if (err instanceof ApiError && err.code === 404) return undefined;
  throw err;
}

export function notFound(gr: GroupResource, name: string): ApiError {
  return new ApiError(404, 'NotFound', `${qualified(gr)} "${name}" not found`, {
    name,
    group: gr.group,
    kind: gr.resource,
  });
}

/** A path this server does not serve, in kube-apiserver's words. */
export function pathNotFound(): ApiError {
  return new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
}

export function alreadyExists(gr: GroupResource, name: string): ApiError {
  return new ApiError(409, 'AlreadyExists', `${qualified(gr)} "${name}" already exists`, {
    name,
    group: gr.group,
    kind: gr.resource,
  });
}

/** A generateName collision that survived every retry: the client should try again. */
export function generateNameConflict(gr: GroupResource, name: string): ApiError {
  return new ApiError(
    409,
    'AlreadyExists',
    `${qualified(gr)} "${name}" already exists, the server was not able to generate a unique name for the object`,
    { name, group: gr.group, kind: gr.resource, retryAfterSeconds: 1 },
  );
}

export const conflictDetail =
  'the object has been modified; please apply your changes to the latest version and try again';

export function conflict(gr: GroupResource, name: string, detail: string = conflictDetail): ApiError {
  return new ApiError(409, 'Conflict', `Operation cannot be fulfilled on ${qualified(gr)} "${name}": ${detail}`, {
    name,
    group: gr.group,
    kind: gr.resource,
  });
}

export function invalid(gk: GroupKind, name: string, errs: FieldError[]): ApiError {
  const prefix = gk.group ? `${gk.kind}.${gk.group}` : gk.kind;
  // kube's StatusDetails omit an empty name (an options kind has none) and an empty group.
  return new ApiError(422, 'Invalid', `${prefix} "${name}" is invalid: ${aggregateMessage(errs)}`, {
    ...(name ? { name } : {}),
    ...(gk.group ? { group: gk.group } : {}),
    kind: gk.kind,
    causes: errs.map(fieldErrorToCause),
  });
}

/** A 422 that is not about one field, as kube answers a failed JSON-patch `test`. */
export function unprocessable(message: string): ApiError {
  return new ApiError(422, 'Invalid', message);
}

export function badRequest(message: string, causes?: StatusCause[]): ApiError {
  return new ApiError(400, 'BadRequest', message, causes ? { causes } : undefined);
}

export function expired(message: string): ApiError {
  return new ApiError(410, 'Expired', message);
}

export function gone(message: string): ApiError {
  return new ApiError(410, 'Gone', message);
}

export function tooLarge(message: string): ApiError {
  return new ApiError(413, 'RequestEntityTooLarge', `Request entity too large: ${message}`);
}

export function unsupportedMediaType(contentType: string, supported: string[]): ApiError {
  return new ApiError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${supported.join(', ')}`,
    { causes: [{ reason: 'UnexpectedHeader', message: `unsupported media type "${contentType}"`, field: 'Content-Type' }] },
  );
}

export function methodNotAllowed(method: string, what: string, why?: string): ApiError {
  return new ApiError(405, 'MethodNotAllowed', `${method} is not supported on ${what}${why ? `: ${why}` : ''}`);
}

export function timeout(message: string, retryAfterSeconds?: number): ApiError {
  return new ApiError(504, 'Timeout', `Timeout: ${message}`, retryAfterSeconds ? { retryAfterSeconds } : undefined);
}

/** A read at a resourceVersion the store has not reached: kube's TooLargeResourceVersionError. */
export function tooLargeResourceVersion(message: string): ApiError {
  const err = timeout(message, 1);
  err.details!.causes = [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }];
  return err;
}

export function tooManyRequests(message: string, retryAfterSeconds: number): ApiError {
  return new ApiError(429, 'TooManyRequests', message, { retryAfterSeconds });
}

export function internalError(message: string): ApiError {
  return new ApiError(500, 'InternalError', `Internal error occurred: ${message}`);
}

/** 503; with a retry delay, the response carries Retry-After (clients such as kubectl then retry). */
export function serviceUnavailable(message: string, retryAfterSeconds?: number): ApiError {
  return new ApiError(503, 'ServiceUnavailable', message, retryAfterSeconds ? { retryAfterSeconds } : undefined);
}
