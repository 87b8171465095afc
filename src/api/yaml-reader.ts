/**
 * The one YAML reader, for request bodies (server/yaml-body.ts) and GitOps manifests
 * (gitops/source/manifests.ts): both read untrusted text, so both meet the same bounds, and each
 * side words what it finds (a Status message over HTTP, `file:line:col: message` in the CLI).
 * - Work is linear in the text. The `yaml` package's uniqueKeys compares each key with every
 *   earlier one (a map of 40,000 keys took 20 s), so keys are checked here, one Set per map; its
 *   parser slows with the depth of flow collections and its composer recurses, so depth and the
 *   number of nodes are measured on the lexer's tokens before anything is composed (`- a` 786,000
 *   times held a worker 40 s and 512 MiB before this bound).
 * - Nesting deeper than maxDepth is refused, flow or block, through aliases too.
 * - Keys must be scalars (an alias key is refused rather than resolved: resolving walks the whole
 *   document); keys given twice are reported, each side deciding what they mean.
 * - Aliases: at most maxAliasCount, and the decoded value at most maxExpansion times its text.
 * The core schema of YAML 1.2 is used whatever a `%YAML` directive says: YAML 1.1's merge keys,
 * binary, sets and timestamps are not JSON.
 */
import { isAlias, isMap, isScalar, isSeq, Lexer, LineCounter, parseAllDocuments, visit, type Document, type Node, type Scalar } from 'yaml';
import { maxDepth, maxExpansion, measureDecoded } from './decoded-size.js';

export { maxDepth, maxExpansion } from './decoded-size.js';
/** The `yaml` package's alias budget: about how many nodes aliases may add to a document. */
export const maxAliasCount = 100;
/** Scalars and collections a text may hold: far above any Team or key, far below what jams a decoder. */
export const maxNodes = 100_000;

/** What the reader refused, where (an offset into the text), for each side to word. */
export type YamlProblem =
  | { kind: 'depth' | 'nodes' | 'key' | 'self-reference'; offset: number }
  | { kind: 'syntax' | 'aliases'; offset: number; message: string }
  | { kind: 'size'; offset: number; size: number; textLength: number };

export interface YamlDocument {
  value: unknown;
  /** Where the document's content starts. */
  offset: number;
  /** The parsed document, for locating fields (manifests.ts). */
  doc: Document;
  /** Keys given twice in one mapping: the key as a JSON field name and where its repetition is. */
  duplicates: { name: string; offset: number }[];
}

// The lexer's markers, which stand for no text.
const zeroWidth = new Set(['\x02', '\x18', '\x1f']);

/** A token that starts or marks a node without being a scalar: an item, key or value indicator, a document, a tag, an anchor, an alias. */
function isMarker(token: string): boolean {
  if (token === '-' || token === '?' || token === ':' || token === '---' || token === '\x02') return true;
  const first = token.charCodeAt(0);
  return first === 0x21 /* ! */ || first === 0x26 /* & */ || first === 0x2a /* * */;
}

/** One pass over the lexer's tokens: flow nesting and node count, before anything is parsed. */
function scan(text: string): YamlProblem | undefined {
  let depth = 0;
  let nodes = 0;
  // Nodes that hold no scalar (`-`, `- !t`, `- &a`, `--- !t`, `?`) are counted apart, by their
  // indicators, tags, anchors and aliases: uncounted, 2,000,000 `- !t` items (10 MB) parsed whole in
  // 38 s and 3.4 GB (found by a review). Ordinary manifests have fewer of these than scalars.
  let markers = 0;
  let offset = 0;
  for (const token of new Lexer().lex(text)) {
    if (token === '\x1f' || token === '[' || token === '{') {
      if (++nodes > maxNodes) return { kind: 'nodes', offset };
    } else if (isMarker(token)) {
      if (++markers > maxNodes) return { kind: 'nodes', offset };
    }
    if (token === '[' || token === '{') {
      if (++depth > maxDepth) return { kind: 'depth', offset };
    } else if (token === ']' || token === '}') depth--;
    if (!zeroWidth.has(token)) offset += token.length;
  }
  return undefined;
}

/** Block nesting, without recursion: the composer has built it, but toJS and every later walk recurse. */
function nestedTooDeep(doc: Document): number | undefined {
  const stack: [Node, number][] = doc.contents ? [[doc.contents as Node, 1]] : [];
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!;
    if (!isMap(node) && !isSeq(node)) continue;
    if (depth > maxDepth) return node.range?.[0] ?? 0;
    for (const item of node.items) {
      const child = isMap(node) ? (item as { value: unknown }).value : item;
      if (child && typeof child === 'object') stack.push([child as Node, depth + 1]);
    }
  }
  return undefined;
}

/** Every mapping's keys: a key that is not a plain scalar is a problem; keys given twice are collected. */
function checkKeys(doc: Document): { problem?: YamlProblem; duplicates: YamlDocument['duplicates'] } {
  let problem: YamlProblem | undefined;
  const duplicates: YamlDocument['duplicates'] = [];
  visit(doc, {
    Map(_key, map) {
      const seen = new Set<string>();
      for (const pair of map.items) {
        const key = pair.key;
        if (key !== null && (!isScalar(key) || isAlias(key))) {
          problem = { kind: 'key', offset: (key as { range?: number[] }).range?.[0] ?? 0 };
          return visit.BREAK;
        }
        // The key as it ends up in a JSON object: `1` and "1" are the same field.
        const scalar = key as Scalar | null;
        const name = String(scalar === null ? null : scalar.value);
        if (seen.has(name)) duplicates.push({ name, offset: scalar?.range?.[0] ?? 0 });
        seen.add(name);
      }
      return undefined;
    },
  });
  return problem ? { problem, duplicates } : { duplicates };
}

/**
 * Flattens every scalar's string. yaml builds a quoted scalar a character or escape at a time, so
 * V8 holds it as a rope of one node per piece, about 32 bytes a character; indexing a rope
 * flattens it in place, for the document and the value read from it alike (both keep the same
 * string). Without it, parsed manifests kept about 13 times their text: a 126 MB source of escaped
 * double-quoted text held 2 GB in `validate` (found by a review; test/gitops/parsed-memory.test.ts).
 */
function flattenStrings(doc: Document): void {
  // Comments are built a line at a time too, and kept with the document (a review: a source of
  // comment lines held 14 to 22 times its text).
  const flatten = (text: unknown) => void (typeof text === 'string' && text.charCodeAt(0));
  flatten(doc.comment);
  flatten(doc.commentBefore);
  visit(doc, (_key, node) => {
    const n = node as { comment?: unknown; commentBefore?: unknown; value?: unknown };
    flatten(n.comment);
    flatten(n.commentBefore);
    if (isScalar(node)) flatten(n.value);
  });
}

/** One document's value, or the first problem with it. */
function readDocument(doc: Document, text: string, sizeBase: number | undefined): YamlDocument | YamlProblem {
  const offset = doc.contents?.range?.[0] ?? 0;
  const first = doc.errors[0];
  if (first) return { kind: 'syntax', offset: first.pos[0], message: first.message.split('\n')[0]! };
  const deep = nestedTooDeep(doc);
  if (deep !== undefined) return { kind: 'depth', offset: deep };
  const keys = checkKeys(doc);
  if (keys.problem) return keys.problem;
  flattenStrings(doc);
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount });
  } catch (err) {
    if (err instanceof RangeError) return { kind: 'depth', offset };
    return { kind: 'aliases', offset, message: err instanceof Error ? err.message.split('\n')[0]! : String(err) };
  }
  const measured = measureDecoded(value);
  if ('problem' in measured) return { kind: measured.problem, offset };
  const textLength = sizeBase ?? Math.max(1, (doc.range?.[2] ?? text.length) - (doc.range?.[0] ?? 0));
  if (measured.size > maxExpansion * textLength) return { kind: 'size', offset, size: measured.size, textLength };
  return { value, offset, doc, duplicates: keys.duplicates };
}

export interface ReadOptions {
  lineCounter?: LineCounter;
  /** The size the decoded value is compared with (a request body's bytes); default each document's text. */
  sizeBase?: number;
}

/** Reads every document of a text: the documents read, and the problems (a document with one is left out). */
export function readYamlDocuments(text: string, opts: ReadOptions = {}): { documents: YamlDocument[]; problems: YamlProblem[] } {
  const documents: YamlDocument[] = [];
  const problems: YamlProblem[] = [];
  const early = scan(text);
  if (early) {
    // Nothing was parsed, so the line counter was not fed: lines up to the problem, for its position.
    opts.lineCounter?.addNewLine(0);
    for (let i = text.indexOf('\n'); i >= 0 && i < early.offset; i = text.indexOf('\n', i + 1)) opts.lineCounter?.addNewLine(i + 1);
    return { documents, problems: [early] };
  }
  try {
    const docs = parseAllDocuments(text, { schema: 'core', version: '1.2', merge: false, uniqueKeys: false, logLevel: 'error', prettyErrors: false, ...(opts.lineCounter ? { lineCounter: opts.lineCounter } : {}) });
    for (const doc of 'empty' in docs ? [] : docs) {
      const read = readDocument(doc, text, opts.sizeBase);
      if ('kind' in read) problems.push(read);
      else documents.push(read);
    }
  } catch (err) {
    // The composer recurses: block nesting deep enough to exhaust the stack ends here.
    if (err instanceof RangeError) return { documents: [], problems: [{ kind: 'depth', offset: 0 }] };
    throw err;
  }
  return { documents, problems };
}
