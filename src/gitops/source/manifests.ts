/** Parses YAML/JSON manifests (several documents a file), keeping each object's file:line:column. */
import { isNode, isScalar, LineCounter, parseAllDocuments, visit, type Document } from 'yaml';

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

/** Aliases a document may expand, so a billion-laughs file fails instead of eating memory. */
const maxAliasCount = 100;

/**
 * The offset of the first key given twice in one mapping. The `yaml` package's own uniqueKeys
 * compares each key with every earlier one (20 s for a map of 40,000 keys, in a pull request's
 * file); one Set per mapping is linear.
 */
function duplicateKey(doc: Document): number | undefined {
  let found: number | undefined;
  visit(doc, {
    Map(_key, map) {
      const seen = new Set<string>();
      for (const pair of map.items) {
        if (!isScalar(pair.key)) continue;
        const name = String(pair.key.value);
        if (seen.has(name)) {
          found = pair.key.range?.[0] ?? 0;
          return visit.BREAK;
        }
        seen.add(name);
      }
      return undefined;
    },
  });
  return found;
}

export function parseManifests(text: string, file: string): { manifests: Manifest[]; errors: ManifestError[] } {
  const lineCounter = new LineCounter();
  const docs = parseAllDocuments(text, { lineCounter, prettyErrors: false, uniqueKeys: false });
  const manifests: Manifest[] = [];
  const errors: ManifestError[] = [];
  const at = (offset: number) => {
    const pos = lineCounter.linePos(offset);
    return { file, line: pos.line, column: pos.col };
  };
  for (const doc of 'empty' in docs ? [] : docs) {
    if (doc.errors.length > 0) {
      for (const err of doc.errors) errors.push({ ...at(err.pos[0]), message: err.message.split('\n')[0]! });
      continue;
    }
    if (doc.contents === null) continue; // an empty document between separators
    const duplicate = duplicateKey(doc);
    if (duplicate !== undefined) {
      errors.push({ ...at(duplicate), message: 'Map keys must be unique' });
      continue;
    }
    const where = at(doc.contents.range[0]);
    let value: unknown;
    try {
      value = doc.toJS({ maxAliasCount });
    } catch (err) {
      errors.push({ ...where, message: err instanceof Error ? err.message : String(err) });
      continue;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      errors.push({ ...where, message: 'a manifest must be a mapping with apiVersion, kind and metadata' });
      continue;
    }
    manifests.push({ ...where, object: value as Record<string, unknown>, locate: (field) => locateIn(doc, field, where, at) });
  }
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
