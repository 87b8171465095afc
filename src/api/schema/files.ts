/**
 * Reads a JSON Schema shipped in schemas/ (beside src/ and dist/ alike). The Action's single-file
 * bundle replaces this module with one holding the files' text (scripts/build-action.mjs).
 */
import { readFileSync } from 'node:fs';

/** The text of schemas/NAME. */
export function readSchemaFile(name: string): string {
  return readFileSync(new URL(`../../../schemas/${name}`, import.meta.url), 'utf8');
}
