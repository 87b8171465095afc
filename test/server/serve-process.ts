/** Moved to test/support/serve-process.ts; this re-export keeps older imports compiling. */
export * from '../support/serve-process.js';
