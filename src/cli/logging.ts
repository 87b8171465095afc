/**
 * The output convention of the long-running commands (serve, watch): stdout carries only lines
 * for a person (where things are, sync reports); stderr carries only log lines, all in one form:
 * JSON (for log collectors; the default when stderr is not a terminal) or one readable line per
 * event (pino-pretty; the default on a terminal). A fatal error follows the same form, so a
 * JSON stream never holds a plain line.
 */
import pino, { type Logger } from 'pino';
import pretty from 'pino-pretty';
import { secretFieldNames, secretFieldPaths } from '../api/secret-fields.js';
import { CliError } from './errors.js';
import { setFatalWriter } from './fatal-line.js';

export type LogFormat = 'json' | 'text';

/**
 * Secrets that could reach a log line through a request object are replaced before writing: the
 * credential headers and tokens (not schema fields), and every writeOnly field of the schemas, by
 * its path and by its name one level down (a logged body or object).
 */
export const redactPaths = [
  'req.headers.authorization',
  'headers.authorization',
  '*.headers.authorization',
  'authorization',
  'token',
  '*.token',
  ...[...secretFieldNames(), ...secretFieldPaths()].flatMap((p) => [p, `*.${p}`]),
];

const levels = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'];

/** The --log-format flag, or the default for where stderr goes. */
export function logFormat(flag: string | undefined): LogFormat {
  if (flag === undefined) return process.stderr.isTTY ? 'text' : 'json';
  if (flag === 'json' || flag === 'text') return flag;
  throw new CliError(`--log-format must be json or text, not "${flag}"`);
}

/** The pino options every teamkeys logger uses: its level and the redaction of secrets. */
export function loggerOptions(level: string): pino.LoggerOptions {
  return { level, redact: { paths: redactPaths, censor: '[redacted]' } };
}

/** The logger on stderr, in one format; it also becomes how a fatal error is written. */
export function createLogger(level: string, format: LogFormat): Logger {
  if (!levels.includes(level)) throw new CliError(`--log-level must be one of ${levels.join(', ')}, not "${level}"`);
  const opts = loggerOptions(level);
  const logger =
    format === 'text'
      ? pino(opts, pretty({ destination: 2, sync: true, colorize: process.stderr.isTTY === true, ignore: 'pid,hostname', translateTime: 'SYS:HH:MM:ss', singleLine: true }))
      : pino(opts, pino.destination({ dest: 2, sync: true }));
  // Text logs end with the plain `error: ...` line; JSON logs with a fatal line whose level says
  // "error:". A silent logger still lets the error that ends the command be seen, as a plain line.
  setFatalWriter(format === 'text' || !logger.isLevelEnabled('fatal') ? undefined : (line) => logger.fatal(line.replace(/\x1b\[[0-9;]*m/g, '').replace(/^error: /, '')));
  return logger;
}
