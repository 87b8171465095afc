/** The source's error type, apart from load.ts so the CLI's error mapping loads no git client. */

/** A source that cannot be read (a missing folder, a git URL that does not answer): the message says which. */
export class SourceError extends Error {}
