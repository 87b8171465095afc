/**
 * Which PostgreSQL failures mean "the database cannot be reached now" (a StorageError Unreachable,
 * answered 503 with Retry-After) rather than a statement that is wrong (a bug: 500, logged).
 */
import { StorageError } from '../errors.js';

/** Node socket errors of a refused, reset, timed-out or unroutable connection. */
const socketCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * SQLSTATEs of an unavailable server: admin_shutdown (57P01, pg_ctl stop -m fast or
 * pg_terminate_backend), crash_shutdown, cannot_connect_now (starting up or shutting down),
 * too_many_connections, query_canceled (statement_timeout); class 08 is connection exceptions.
 */
const sqlStates = new Set(['57P01', '57P02', '57P03', '53300', '57014']);

/**
 * SQLSTATEs of a database that is up but refuses writes for now: a full disk, exhausted resources
 * or memory, a failing disk, and a read-only database (a standby after a failover, or
 * default_transaction_read_only). Retrying later may succeed, so these are 503 as well, saying why.
 */
const refusals = new Map([
  ['53100', 'the disk holding its data is full'],
  ['53000', 'it is out of resources'],
  ['53200', 'it is out of memory'],
  ['58030', 'its disk failed a write'],
  ['25006', 'it is read-only (a standby, or default_transaction_read_only)'],
]);

/** pg and pg-pool report a lost or timed-out connection with these messages and no code. */
const connectionMessages = /Connection terminated|timeout exceeded when trying to connect|is not queryable|timeout expired|Query read timeout/i;

/** Whether err says the database is out of reach (retrying later may succeed) rather than a bug. */
export function isConnectionError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (socketCodes.has(code) || sqlStates.has(code) || /^08[0-9A-Z]{3}$/.test(code))) return true;
  return connectionMessages.test(err.message);
}

/** A StorageError Unreachable for a connection failure or a refusal; any other error is returned as it is. */
export function classify(err: unknown): unknown {
  if (err instanceof StorageError || !(err instanceof Error)) return err;
  const refusal = refusals.get(String((err as { code?: unknown }).code));
  if (refusal) return new StorageError('Unreachable', '', `PostgreSQL refuses writes: ${refusal} (${err.message})`);
  if (!isConnectionError(err)) return err;
  return new StorageError('Unreachable', '', `PostgreSQL is unreachable: ${err.message}`);
}
