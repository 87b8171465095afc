/**
 * The one place the CLI turns errors into messages and exit codes. Every error exits 1 (0 is
 * success and 2 is reserved for "changes" under --detailed-exitcode, as terraform does) and prints
 * one line naming what to fix. A stack trace only with TEAMKEYS_DEBUG=1, for errors nobody expected.
 */
import { CommanderError } from 'commander';
import { ApiError } from '../api/errors.js';
import { ClientError } from '../client/types.js';
import { isFailedOutcome, type Report } from '../gitops/report/report.js';
import { SourceError } from '../gitops/source/errors.js';
import { StoreUrlError } from '../store/url.js';
import { colourOn, paint } from './colour.js';

/** An error the user can fix from the message alone. */
export class CliError extends Error {}

/** Exit code of every error. */
export const errorExitCode = 1;

/** A finished run's exit code: 0 done or nothing to do, 2 changes or drift (only with --detailed-exitcode), 1 invalid, refused or failed. */
export function reportExitCode(report: Report, detailed: boolean): number {
  if (isFailedOutcome(report.outcome)) return errorExitCode;
  return detailed && ['changes', 'drifted'].includes(report.outcome) ? 2 : 0;
}

/** Commander's own errors (unknown flag, missing argument): help and --version are not errors. */
const commanderSuccess = new Set(['commander.helpDisplayed', 'commander.version', 'commander.help']);

/** Errors node raises with a code the user can act on, and what to say about them. */
function systemErrorMessage(err: NodeJS.ErrnoException): string | undefined {
  const where = 'address' in err && 'port' in err ? `${String(err.address)}:${String(err.port)}` : undefined;
  if (err.code === 'EADDRINUSE') return `${where ?? 'the address'} is already in use: stop what listens there or choose another --listen`;
  if (err.code === 'EADDRNOTAVAIL') return `${where ?? 'the address'} is not an address of this machine: choose another --listen`;
  if (err.code === 'EACCES' && err.syscall === 'listen') return `no permission to listen on ${where ?? 'that port'}: choose a port above 1023 in --listen`;
  if (err.code && err.syscall && typeof err.path === 'string') return err.message; // ENOENT, EACCES ... on a named file
  return undefined;
}

function message(err: unknown): string {
  if (err instanceof CommanderError) return `${err.message.replace(/^error: /, '').replace(/\s*\n\s*/g, ' ').trim()} (see --help)`;
  if (err instanceof ApiError) return `Error from server (${err.reason}): ${err.message}`;
  if (err instanceof ClientError) {
    return err.fromServer ? `Error from server (${err.status.reason ?? err.status.code}): ${err.message}` : err.message;
  }
  if (err instanceof SourceError || err instanceof CliError || err instanceof StoreUrlError) return err.message;
  const known = err instanceof Error ? systemErrorMessage(err as NodeJS.ErrnoException) : undefined;
  if (known) return known;
  return `${(err instanceof Error ? err.message : String(err)).split('\n')[0]} (unexpected: set TEAMKEYS_DEBUG=1 to see where it came from)`;
}

/** Prints the error as one line (kubectl's `Error from server` only for what a server answered) and returns the exit code. */
export function reportError(err: unknown, write: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): number {
  if (err instanceof CommanderError && commanderSuccess.has(err.code)) return err.exitCode;
  const line = message(err);
  write(line.startsWith('Error from server') ? line : `${paint('error:', 'red', colourOn(process.stderr))} ${line}`);
  if (process.env.TEAMKEYS_DEBUG && err instanceof Error && err.stack) write(err.stack);
  return failureExitCode;
}

/** What an error exits with: 1, except for commands where 1 means something else (diff: differences found). */
let failureExitCode = errorExitCode;
export function setFailureExitCode(code: number): void {
  failureExitCode = code;
}
