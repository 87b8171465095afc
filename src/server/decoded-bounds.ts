/**
 * What a decoded body may grow to. YAML aliases let a small body name one large value many times;
 * whatever copies the value later (structuredClone, storage, every watcher's serialization) pays
 * for each name. So the decoded value is measured as its JSON text would be, counting each alias
 * at full size, once per node and without recursion past the depth limit: linear in the body.
 */
import { badRequest, tooLarge } from '../api/errors.js';
import { maxDepth } from './yaml-body.js';

/** A decoded body may be at most this many times the size of the body as sent. */
export const maxExpansion = 4;

/** Characters of a value's JSON form, near enough: strings count their length and two quotes. */
function scalarSize(v: unknown): number {
  if (typeof v === 'string') return v.length + 2;
  if (typeof v === 'number') return String(v).length;
  if (typeof v === 'boolean') return v ? 4 : 5;
  return 4; // null; undefined and functions cannot come out of JSON or the YAML core schema
}

/**
 * Refuses a decoded body nested deeper than maxDepth (400), referring to itself (400, a YAML alias
 * inside its own anchor), or whose JSON form exceeds `maxExpansion` times `bodyBytes` or
 * `limitBytes` (413).
 */
export function checkDecoded(value: unknown, bodyBytes: number, limitBytes: number): void {
  const ceiling = Math.min(limitBytes, maxExpansion * bodyBytes);
  // Nodes shared through aliases are measured once; their size counts at every use, and their
  // height at every depth they are used at.
  const known = new WeakMap<object, { size: number; height: number }>();
  const open = new WeakSet<object>();
  const measure = (node: unknown, depth: number): { size: number; height: number } => {
    if (node === null || typeof node !== 'object') return { size: scalarSize(node), height: 0 };
    const seen = known.get(node);
    if (depth > maxDepth || (seen && depth + seen.height - 1 > maxDepth)) throw badRequest(`the request body is nested more than ${maxDepth} levels deep`);
    if (seen) return seen;
    if (open.has(node)) throw badRequest('the request body refers to itself (a YAML alias inside its own anchor)');
    open.add(node);
    const m = { size: 2, height: 1 };
    const add = (item: unknown, extra: number) => {
      const child = measure(item, depth + 1);
      m.size += child.size + extra;
      m.height = Math.max(m.height, child.height + 1);
    };
    if (Array.isArray(node)) for (const item of node) add(item, 1);
    else for (const [key, item] of Object.entries(node)) add(item, key.length + 4);
    open.delete(node);
    known.set(node, m);
    return m;
  };
  if (measure(value, 1).size > ceiling) {
    throw tooLarge(`the decoded request body is larger than ${ceiling} bytes (${maxExpansion} times the ${bodyBytes} bytes sent, at most ${limitBytes})`);
  }
}
