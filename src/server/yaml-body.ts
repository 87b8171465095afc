/**
 * Decodes a YAML request body into plain JSON values, in time linear in its length. The `yaml`
 * package's own checks are not: its uniqueKeys option compares each key with every earlier one
 * (a 390 KB map of 40,000 keys took 20 s), and its parser slows down with the depth of flow
 * collections (`[[[[...`). So keys are checked here with one Set per map, and flow nesting is
 * measured on the lexer's tokens before anything is composed. It runs in a worker thread
 * (yaml-thread.ts) because even a linear pass of this parser takes about a second per megabyte.
 */
import { isAlias, isScalar, Lexer, LineCounter, parseDocument, visit, type Document, type Scalar } from 'yaml';

/** Deeper bodies are refused before anything walks them recursively (content.ts checks the decoded value too). */
export const maxDepth = 100;
/** The `yaml` package's alias budget: about how many nodes aliases may add to the document. */
export const maxAliasCount = 100;

/** The value, with the keys given twice in one mapping (fieldValidation decides what they mean: duplicate-fields.ts). */
export type YamlResult = { value: unknown; duplicates: string[] } | { error: string; tooLarge?: boolean };

/** The deepest nesting of flow collections, from the lexer's tokens (quoted text is one token). */
function flowDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  for (const token of new Lexer().lex(text)) {
    if (token === '[' || token === '{') deepest = Math.max(deepest, ++depth);
    else if (token === ']' || token === '}') depth--;
  }
  return deepest;
}

/**
 * Checks every mapping's keys: a key that is not a scalar is an error; keys given twice are
 * collected in kube's words (`line 5: key "x" already set in map`), one Set per mapping.
 */
function checkKeys(doc: Document, lines: LineCounter): { error?: string; duplicates: string[] } {
  let error: string | undefined;
  const duplicates: string[] = [];
  const at = (offset: number | undefined) => {
    const pos = lines.linePos(offset ?? 0);
    return `at line ${pos.line}, column ${pos.col}`;
  };
  visit(doc, {
    Map(_key, map) {
      const seen = new Set<string>();
      for (const pair of map.items) {
        const key = pair.key;
        // An alias is refused rather than resolved: resolving one walks the whole document.
        if (key !== null && (!isScalar(key) || isAlias(key))) {
          error = `Map keys must be plain strings, numbers or booleans ${at((key as { range?: number[] }).range?.[0])}`;
          return visit.BREAK;
        }
        // The key as it ends up in a JSON object: `1` and "1" are the same field.
        const scalar = key as Scalar | null;
        const name = String(scalar === null ? null : scalar.value);
        if (seen.has(name)) duplicates.push(`line ${lines.linePos(scalar?.range?.[0] ?? 0).line}: key ${JSON.stringify(name)} already set in map`);
        seen.add(name);
      }
      return undefined;
    },
  });
  return error ? { error, duplicates } : { duplicates };
}

/**
 * One YAML document as JSON values. The core schema of YAML 1.2 is used whatever the document's
 * `%YAML` directive says: YAML 1.1's merge keys, binary, sets and timestamps are not JSON.
 */
export function decodeYaml(text: string): YamlResult {
  try {
    if (flowDepth(text) > maxDepth) return { error: `the request body is nested more than ${maxDepth} levels deep` };
    const lineCounter = new LineCounter();
    const doc = parseDocument(text, { schema: 'core', version: '1.2', merge: false, uniqueKeys: false, logLevel: 'error', prettyErrors: true, lineCounter });
    const first = doc.errors[0];
    if (first) return { error: `the request body is not valid YAML: ${first.message.split('\n')[0]}` };
    const keys = checkKeys(doc, lineCounter);
    if (keys.error) return { error: `the request body is not valid YAML: ${keys.error}` };
    return { value: doc.toJS({ maxAliasCount }), duplicates: keys.duplicates };
  } catch (err) {
    // The composer recurses: block nesting deep enough to exhaust the stack ends here.
    if (err instanceof RangeError) return { error: `the request body is nested too deeply to decode` };
    return { error: `the request body is not valid YAML: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}` };
  }
}
