/**
 * How the CLI writes the error that ends it: a plain line, or a fatal log line once a command's
 * logger writes JSON (createLogger in logging.ts sets it). Apart from logging.ts, so the commands
 * that never log (validate, --help) do not load pino to report an error.
 */
let fatal: ((line: string) => void) | undefined;

export function setFatalWriter(write: ((line: string) => void) | undefined): void {
  fatal = write;
}

/** The writer of the error that ends the command. */
export function errorWriter(): (line: string) => void {
  return fatal ?? ((line) => process.stderr.write(`${line}\n`));
}
