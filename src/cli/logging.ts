/** The JSON logger serve and watch write to stderr, with secrets redacted. */
import pino, { type Logger } from 'pino';

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

/** A pino logger on stderr at `level`. */
export function stderrLogger(level: string): Logger {
  return pino({ level, redact: { paths: redactPaths, censor: '[redacted]' } }, pino.destination(2));
}
