/**
 * A YAML request body as plain JSON values, read by the one YAML reader (api/yaml-reader.ts) that
 * GitOps manifests meet too, and refused in a Status's words. It runs in a worker thread
 * (yaml-thread.ts) because even a linear pass of the parser takes about a second per megabyte.
 */
import { LineCounter } from 'yaml';
import { maxBodyBytes, maxDuplicatesNamed } from './body-limit.js';
import { maxDepth, maxExpansion, maxNodes, readYamlDocuments, type YamlProblem } from '../api/yaml-reader.js';
import { shownName } from '../api/field-errors.js';

export { maxDepth } from '../api/yaml-reader.js';

/** The value, with the keys given twice in one mapping (fieldValidation decides what they mean: duplicate-fields.ts). */
export type YamlResult = { value: unknown; duplicates: string[] } | { error: string; tooLarge?: boolean };

/** A problem the reader found, in the words a client reads in the Status. */
function refusal(p: YamlProblem, lines: LineCounter, bodyBytes: number, limitBytes: number): { error: string; tooLarge?: boolean } {
  const at = () => {
    const pos = lines.linePos(p.offset);
    return `at line ${pos.line}, column ${pos.col}`;
  };
  switch (p.kind) {
    case 'depth':
      return { error: `the request body is nested more than ${maxDepth} levels deep` };
    case 'nodes':
      return { error: `the request body holds more than ${maxNodes} YAML nodes`, tooLarge: true };
    case 'key':
      return { error: `the request body is not valid YAML: Map keys must be plain strings, numbers or booleans ${at()}` };
    case 'self-reference':
      return { error: 'the request body refers to itself (a YAML alias inside its own anchor)' };
    case 'size': {
      const ceiling = Math.min(limitBytes, maxExpansion * bodyBytes);
      return { error: `the decoded request body is larger than ${ceiling} bytes (${maxExpansion} times the ${bodyBytes} bytes sent, at most ${limitBytes})`, tooLarge: true };
    }
    default:
      // An unresolved alias is named in the YAML library's message, and the body may hold a key: not repeated.
      return { error: `the request body is not valid YAML: ${/^Unresolved alias/.test(p.message) ? `an alias refers to no anchor before it ${at()}` : p.message}` };
  }
}

/** One YAML document as JSON values. */
export function decodeYaml(text: string, limitBytes = maxBodyBytes): YamlResult {
  const lines = new LineCounter();
  const bodyBytes = Buffer.byteLength(text, 'utf8');
  const { documents, problems } = readYamlDocuments(text, { lineCounter: lines, sizeBase: bodyBytes });
  if (problems[0]) return refusal(problems[0], lines, bodyBytes, limitBytes);
  if (documents.length > 1) return { error: 'the request body is not valid YAML: it holds more than one document' };
  const doc = documents[0];
  if (!doc) return { value: null, duplicates: [] };
  // Named as duplicate-fields.ts names a JSON body's: the first hundred, each key cut.
  const named = doc.duplicates.slice(0, maxDuplicatesNamed).map((d) => `line ${lines.linePos(d.offset).line}: key ${JSON.stringify(shownName(d.name))} already set in map`);
  if (doc.duplicates.length > maxDuplicatesNamed) named.push('more duplicate fields, not named');
  return { value: doc.value, duplicates: named };
}
