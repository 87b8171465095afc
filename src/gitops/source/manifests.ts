/** Parses YAML/JSON manifests (several documents a file), keeping each object's file:line:column. */
import { isNode, LineCounter, type Document } from 'yaml';
import { maxDepth, maxExpansion, maxNodes, readYamlDocuments, type YamlProblem } from '../../api/yaml-reader.js';
import { findKeys, keyInFileMessage } from '../../api/key-scan.js';

export interface Location {
  file: string;
  line: number;
  column: number;
}

export interface Manifest extends Location {
  object: Record<string, unknown>;
  /** Where a field (`spec.users[1]`) is written, or the nearest enclosing field that is. */
  locate(field: string): Location;
}

export interface ManifestError extends Location {
  message: string;
}

/** `file:line:col: message`, the form editors and CI annotations understand. */
export function formatError(e: ManifestError): string {
  return `${e.file}:${e.line}:${e.column}: ${e.message}`;
}

/** A problem the one YAML reader (api/yaml-reader.ts) found, in the CLI's words after `file:line:col:`. */
function describe(p: YamlProblem): string {
  switch (p.kind) {
    case 'depth':
      return `nested more than ${maxDepth} levels`;
    case 'nodes':
      return `holds more than ${maxNodes} YAML nodes`;
    case 'key':
      return 'Map keys must be plain strings, numbers or booleans';
    case 'self-reference':
      return 'an alias refers to itself (it is inside its own anchor)';
    case 'size':
      return `decodes to more than ${maxExpansion} times its ${p.textLength} characters (aliases repeat ${p.size} characters)`;
    default:
      return p.message;
  }
}

export function parseManifests(text: string, file: string): { manifests: Manifest[]; errors: ManifestError[] } {
  const lineCounter = new LineCounter();
  const { documents, problems } = readYamlDocuments(text, { lineCounter });
  const manifests: Manifest[] = [];
  const errors: ManifestError[] = [];
  const at = (offset: number) => {
    const pos = lineCounter.linePos(offset);
    return { file, line: pos.line, column: pos.col };
  };
  for (const p of problems) errors.push({ ...at(p.offset), message: describe(p) });
  // Anywhere in the file (a comment, an annotation, a field of any kind): the pull request must never carry a key.
  for (const k of findKeys(text)) errors.push({ file, line: k.line, column: k.column, message: keyInFileMessage });
  for (const { doc, value, offset, duplicates } of documents) {
    if (doc.contents === null) continue; // an empty document between separators
    // A key given twice is an error in a manifest: which value the author meant is unknown.
    if (duplicates[0]) {
      errors.push({ ...at(duplicates[0].offset), message: 'Map keys must be unique' });
      continue;
    }
    const where = at(offset);
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      errors.push({ ...where, message: 'a manifest must be a mapping with apiVersion, kind and metadata' });
      continue;
    }
    manifests.push({ ...where, object: value as Record<string, unknown>, locate: (field) => locateIn(doc, field, where, at) });
  }
  errors.sort((a, b) => a.line - b.line || a.column - b.column);
  return { manifests, errors };
}

/** `spec.clusterRoles[1].name` -> ['spec', 'clusterRoles', 1, 'name']; `labels[app.io/x]` keeps the key whole. */
export function parseFieldPath(field: string): (string | number)[] {
  const out: (string | number)[] = [];
  for (const m of field.matchAll(/([^.[\]]+)|\[([^\]]*)\]/g)) {
    if (m[1] !== undefined) out.push(m[1]);
    else out.push(/^\d+$/.test(m[2]!) ? Number(m[2]) : m[2]!);
  }
  return out;
}

function locateIn(doc: Document, field: string, fallback: Location, at: (offset: number) => Location): Location {
  const path = parseFieldPath(field);
  for (let n = path.length; n > 0; n--) {
    const node = doc.getIn(path.slice(0, n), true);
    if (isNode(node) && node.range) return at(node.range[0]);
  }
  return fallback;
}
