/** The JSON logger serve and watch write to stderr, with secrets redacted. */
import pino, { type Logger } from 'pino';
import { CliError } from './errors.js';

/** Secrets that could reach a log line through a request object are replaced before writing. */
export const redactPaths = [
  'req.headers.authorization',
  'headers.authorization',
  '*.headers.authorization',
  'authorization',
  'token',
  '*.token',
  'key',
  '*.key',
  'spec.key',
  '*.spec.key',
];

const levels = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/** A pino logger on stderr at `level`. */
export function stderrLogger(level: string): Logger {
  if (!levels.includes(level)) throw new CliError(`--log-level must be one of ${levels.join(', ')}, not "${level}"`);
  return pino({ level, redact: { paths: redactPaths, censor: '[redacted]' } }, pino.destination(2));
}
