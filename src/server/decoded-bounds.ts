/**
 * What a decoded body may grow to, in a Status's words: measured by the one measure the YAML
 * reader uses too (api/decoded-size.ts), for JSON bodies as for YAML ones.
 */
import { badRequest, tooLarge } from '../api/errors.js';
import { maxDepth, maxExpansion, maxNodes, measureDecoded } from '../api/decoded-size.js';

export { maxExpansion, maxNodes } from '../api/decoded-size.js';

/**
 * Refuses a decoded body nested deeper than maxDepth (400), referring to itself (400, a YAML alias
 * inside its own anchor), or whose JSON form exceeds `maxExpansion` times `bodyBytes` or
 * `limitBytes`, or holding more than `maxNodes` fields and list items (413).
 */
export function checkDecoded(value: unknown, bodyBytes: number, limitBytes: number): void {
  const ceiling = Math.min(limitBytes, maxExpansion * bodyBytes);
  const measured = measureDecoded(value);
  if ('problem' in measured) {
    throw badRequest(measured.problem === 'depth' ? `the request body is nested more than ${maxDepth} levels deep` : 'the request body refers to itself (a YAML alias inside its own anchor)');
  }
  if (measured.size > ceiling) {
    throw tooLarge(`the decoded request body is larger than ${ceiling} bytes (${maxExpansion} times the ${bodyBytes} bytes sent, at most ${limitBytes})`);
  }
  checkNodes(measured.nodes);
}

/** Refuses a body of more than maxNodes fields and list items (413): the work of a write grows with them. */
export function checkNodes(nodes: number): void {
  if (nodes > maxNodes) throw tooLarge(`the request body holds ${nodes} fields and list items, more than the ${maxNodes} a write may hold`);
}
