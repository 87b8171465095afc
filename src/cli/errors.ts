/** The one place the CLI turns errors into messages and exit codes. */
import { ApiError } from '../api/errors.js';
import { ClientError } from '../client/types.js';
import { SourceError } from '../gitops/source/load.js';
import { StoreUrlError } from '../store/open.js';

/** An error the user can fix from the message alone; `exitCode` 2 means the command line was wrong. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
  }
}

/** Prints the error as kubectl would and returns the exit code. */
export function reportError(err: unknown, write: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): number {
  if (err instanceof ApiError) {
    write(`Error from server (${err.reason}): ${err.message}`);
    return 1;
  }
  if (err instanceof ClientError) {
    write(`Error from server (${err.status.reason ?? err.status.code}): ${err.message}`);
    return 1;
  }
  if (err instanceof SourceError) {
    write(`error: ${err.message}`);
    return 1;
  }
  if (err instanceof CliError) {
    write(`error: ${err.message}`);
    return err.exitCode;
  }
  if (err instanceof StoreUrlError) {
    write(`error: ${err.message}`);
    return 2;
  }
  write(`error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  return 1;
}
