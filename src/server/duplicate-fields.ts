/**
 * Keys a request body gives twice in one object. JSON.parse and YAML keep the last value silently;
 * kube-apiserver reports them under fieldValidation (Strict: 400, Warn: a Warning), worded as it
 * words them: `duplicate field "spec.displayName"` for JSON, `line 5: key "displayName" already
 * set in map` for YAML. Runs on bodies already parsed, so it may assume they are well formed.
 */
import { joinPath, shownName } from '../api/field-errors.js';
import { yamlDuplicateKeys, type BodyType } from './content.js';
import { stringEnd } from './json-scan.js';
import { maxDuplicatesNamed } from './body-limit.js';

export function duplicateFields(raw: Buffer | undefined, type: BodyType): string[] {
  if (!raw || raw.length === 0) return [];
  if (type === 'json' || type === 'merge-patch') return duplicateJsonFields(raw.toString('utf8'));
  if (type === 'yaml' || type === 'apply-patch') {
    const text = raw.toString('utf8');
    // kubectl sends its server-side applies as JSON (which is YAML): scanned as JSON, not parsed again as YAML.
    if (isJsonText(text)) return duplicateJsonFields(text);
    return yamlDuplicateKeys(raw);
  }
  return [];
}

function isJsonText(text: string): boolean {
  if (!/^\s*\{/.test(text)) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Keys are cut before they are joined (the join is cut again, shownName): a cut shows no more than 256 characters. */
const maxShownKey = 257;

/**
 * An open object or array. Its paths are kept as shown, cut, and built from cut parts only: cutting
 * a whole path made V8 copy it for every object below a long key (found by a review: a 1 MB key
 * over 2,000 nested objects held the event loop 1.4 s).
 */
interface Frame {
  path: string;
  /** Keys seen so far in an object; undefined for an array. */
  keys?: Set<string>;
  index: number;
  /** The member whose value comes next (an object's last key), as shown. */
  child: string;
}

/** One pass over the text with a stack of the open objects and arrays. */
export function duplicateJsonFields(text: string): string[] {
  const found: string[] = [];
  const stack: Frame[] = [];
  let expectKey = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      const start = i;
      i = stringEnd(text, start);
      const top = stack[stack.length - 1];
      if (expectKey && top?.keys) {
        const quoted = text.slice(start + 1, i);
        const key = quoted.includes('\\') ? (JSON.parse(`"${quoted}"`) as string) : quoted;
        top.child = shownName(joinPath(top.path, key.length > maxShownKey ? key.slice(0, maxShownKey) : key));
        if (top.keys.has(key)) {
          if (found.length === maxDuplicatesNamed) {
            found.push('more duplicate fields, not named');
            return found;
          }
          found.push(`duplicate field "${top.child}"`);
        }
        top.keys.add(key);
        expectKey = false;
      }
    } else if (c === 0x7b /* { */ || c === 0x5b /* [ */) {
      const parent = stack[stack.length - 1];
      const path = parent ? (parent.keys ? parent.child : shownName(joinPath(parent.path, parent.index))) : '';
      stack.push(c === 0x7b ? { path, keys: new Set(), index: 0, child: '' } : { path, index: 0, child: '' });
      expectKey = c === 0x7b;
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      stack.pop();
    } else if (c === 0x2c /* , */) {
      const top = stack[stack.length - 1];
      if (top?.keys) expectKey = true;
      else if (top) top.index++;
    }
  }
  return found;
}

