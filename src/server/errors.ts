/** The one place HTTP-level failures become Status bodies; a client mistake is never a 500. */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, badRequest, internalError, tooLarge, type StatusReason } from '../api/errors.js';
import { isUnavailable, unavailable } from '../registry/storage-errors.js';
import { maxBodyBytes } from './content.js';

const reasons: Record<number, StatusReason> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  408: 'Timeout',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
  429: 'TooManyRequests',
};

/** `limit`: the body limit of the route that refused the body (sign-in and the token exchange take 64 KiB, not 3 MiB). */
export function toHttpApiError(err: unknown, limit = maxBodyBytes): ApiError {
  if (err instanceof ApiError) return err;
  // Storage out of reach outside the registry's calls (authentication reads keys too): still a 503.
  if (isUnavailable(err)) return unavailable(err);
  const e = err as Partial<FastifyError> & { status?: number; type?: string };
  if (e.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || e.type === 'entity.too.large') {
    return tooLarge(`the request body is larger than the limit of ${limit} bytes`);
  }
  if (e.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new ApiError(415, 'UnsupportedMediaType', e.message ?? 'unsupported media type');
  const code = e.statusCode ?? e.status;
  if (typeof code === 'number' && code >= 400 && code < 500) {
    return new ApiError(code, reasons[code] ?? 'BadRequest', e.message ?? 'bad request');
  }
  if (err instanceof URIError) return badRequest(`the request path is not valid: ${err.message}`);
  return internalError('an unexpected error was logged by the server');
}

export function handleError(err: unknown, req: FastifyRequest, reply: FastifyReply): void {
  const apiErr = toHttpApiError(err, req.routeOptions?.bodyLimit);
  // Storage out of reach is an outage, reported by /readyz and the store's own warnings; a 504 is a
  // read at a revision not reached yet (the client retries); anything else is a bug.
  if (apiErr.code === 503) req.log.warn({ err }, 'request failed: storage unavailable');
  else if (apiErr.code === 504) req.log.info({ status: apiErr.toStatus() }, 'request timed out');
  else if (apiErr.code >= 500) req.log.error({ err }, 'request failed');
  if (reply.sent || reply.raw.headersSent) return;
  // As kube-apiserver does: a Status that names a retry delay says it in the header clients obey.
  const retryAfter = apiErr.details?.retryAfterSeconds;
  if (retryAfter) void reply.header('Retry-After', String(retryAfter));
  void reply.code(apiErr.code).type('application/json').send(JSON.stringify(apiErr.toStatus()));
}
