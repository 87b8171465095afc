/**
 * Appends without spreading: `push(...items)` passes every item as an argument, and past about
 * 120,000 of them V8 throws "Maximum call stack size exceeded" (found by a review: a file of
 * 200,000 empty documents crashed validate with no file:line:col). For lists that grow with a
 * source's content: manifests, errors, report lines.
 */
export function append<T>(target: T[], items: readonly T[]): T[] {
  for (const item of items) target.push(item);
  return target;
}
