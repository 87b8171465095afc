/**
 * What a decoded value costs: YAML aliases let a small text name one large value many times, and
 * whatever copies the value later (structuredClone, storage, every watcher's serialization) pays
 * for each name. So a decoded value is measured as its JSON text would be, counting each alias at
 * full size, once per node and without recursion past the depth limit: linear in the text.
 */

/** Deeper values are refused before anything walks them recursively. */
export const maxDepth = 100;
/** A decoded value may be at most this many times the size of the text it came from. */
export const maxExpansion = 4;
/**
 * A request body may hold at most this many fields and list items (map entries and array items,
 * at any depth). Every write walks an object several times (pruning, defaults, validation,
 * managedFields, serialization), each walk paying per field: this bound, not the 3 MiB of text,
 * keeps one write well under 100 ms of the event loop. kube-apiserver has no such bound; a Team at its
 * schema's list bounds that needs more is not an object people write.
 */
export const maxNodes = 2_048;

/** Characters of a value's JSON form, near enough: strings count their length and two quotes. */
function scalarSize(v: unknown): number {
  if (typeof v === 'string') return v.length + 2;
  if (typeof v === 'number') return String(v).length;
  if (typeof v === 'boolean') return v ? 4 : 5;
  return 4; // null; undefined and functions cannot come out of JSON or the YAML core schema
}

/** The size of a value's JSON form, or why it cannot be measured: deeper than maxDepth, or containing itself. */
export function measureDecoded(value: unknown): { size: number; nodes: number } | { problem: 'depth' | 'self-reference' } {
  // Nodes shared through aliases are measured once; their size counts at every use, and their
  // height at every depth they are used at.
  const known = new WeakMap<object, { size: number; height: number; nodes: number }>();
  const open = new WeakSet<object>();
  let problem: 'depth' | 'self-reference' | undefined;
  const measure = (node: unknown, depth: number): { size: number; height: number; nodes: number } => {
    if (problem || node === null || typeof node !== 'object') return { size: scalarSize(node), height: 0, nodes: 0 };
    const seen = known.get(node);
    if (depth > maxDepth || (seen && depth + seen.height - 1 > maxDepth)) {
      problem = 'depth';
      return { size: 0, height: 0, nodes: 0 };
    }
    if (seen) return seen;
    if (open.has(node)) {
      problem = 'self-reference';
      return { size: 0, height: 0, nodes: 0 };
    }
    open.add(node);
    const m = { size: 2, height: 1, nodes: 0 };
    const add = (item: unknown, extra: number) => {
      const child = measure(item, depth + 1);
      m.size += child.size + extra;
      m.nodes += child.nodes + 1;
      m.height = Math.max(m.height, child.height + 1);
    };
    if (Array.isArray(node)) for (const item of node) add(item, 1);
    else {
      const map = node as Record<string, unknown>;
      // for...in: no array of [key, value] pairs for a map of 190,000 keys.
      for (const key in map) if (Object.hasOwn(map, key)) add(map[key], key.length + 4);
    }
    open.delete(node);
    known.set(node, m);
    return m;
  };
  const { size, nodes } = measure(value, 1);
  return problem ? { problem } : { size, nodes };
}

/**
 * The fields and list items of an object (map entries and array items at any depth), counted no
 * further than `cap` + 1, leaving out `skip` (metadata.managedFields, the server's own record).
 * A write's result is held to maxNodes too: patches under the bound must not grow an object past it.
 */
export function membersOf(value: unknown, cap: number, skip?: unknown): number {
  let count = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0 && count <= cap) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object' || node === skip) continue;
    if (Array.isArray(node)) {
      count += node.length;
      for (const item of node) stack.push(item);
    } else {
      const map = node as Record<string, unknown>;
      for (const key in map) {
        if (!Object.hasOwn(map, key) || map[key] === skip) continue;
        count++;
        stack.push(map[key]);
      }
    }
  }
  return count;
}
