/** Moved to test/support/in-process.ts; this re-export keeps older imports compiling. */
export * from '../support/in-process.js';
