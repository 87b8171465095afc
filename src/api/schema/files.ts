/**
 * Reads a JSON Schema shipped in schemas/ (beside src/ and dist/ alike). The Action's single-file
 * bundle replaces this module with one holding the files' text (scripts/build-action.mjs).
 */
import { readFileSync } from 'node:fs';
import { packageFile } from '../../package-files.js';

/** The text of schemas/NAME. */
export function readSchemaFile(name: string): string {
  return readFileSync(packageFile(`schemas/${name}`), 'utf8');
}
