/**
 * Failures the HTTP parser sees before any route runs (malformed requests, headers too large,
 * clients too slow to send their request): answered with a Status body like every other error,
 * then the connection is closed.
 */
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { ApiError, badRequest } from '../api/errors.js';

export function clientErrorStatus(err: NodeJS.ErrnoException): ApiError {
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return new ApiError(408, 'Timeout', 'the client did not send its request in time; the connection is closed');
  }
  if (err.code === 'HPE_HEADER_OVERFLOW') return new ApiError(431, 'BadRequest', 'the request headers are larger than the server accepts');
  return badRequest('the request is not valid HTTP/1.1');
}

export function handleClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  if (socket.writable) {
    const status = clientErrorStatus(err);
    const body = JSON.stringify(status.toStatus());
    socket.write(
      `HTTP/1.1 ${status.code} ${STATUS_CODES[status.code]}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
