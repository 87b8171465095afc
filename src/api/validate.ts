/** One validation for every path that accepts an object: the server's writes and the reconciler's manifests. */
import { maxNodes, membersOf } from './decoded-size.js';
import type { FieldError } from './field-errors.js';
import type { ResourceModel } from './model.js';
import { validateObjectMeta } from './object-meta.js';
import { ratcheted } from './ratchet.js';
import { ajvToFieldErrors } from './schema/ajv-errors.js';
import { validatorFor } from './schema/load.js';
import { checkListTypes } from './schema/walk.js';
import { isSecretPath } from './secrets.js';
import type { KubeObject } from './types.js';

/**
 * Every problem with the object: metadata rules, then schema, list semantics and kind rules. On an
 * update (`old` given) the first three judge only values the update changed (ratchet.ts); kind
 * rules decide that for themselves (a server's maximum ttl binds only a changed ttl).
 */
export function validateObject(model: ResourceModel, obj: KubeObject, old?: KubeObject): FieldError[] {
  // First, and alone: every check below walks the object, and pays for each of its fields. An
  // object stored larger before the bound existed may still be written, as long as it does not grow.
  const members = membersOf(obj, maxNodes, obj.metadata?.managedFields);
  if (members > maxNodes && (!old || members > membersOf(old, members, old.metadata?.managedFields))) return [{ type: 'TooMany', field: '<object>', detail: `may hold at most ${maxNodes} fields and list items (docs/api.md, bounds on one request)` }];
  const errs = validateObjectMeta(obj.metadata);
  // A field the metadata rules already judged (a name over 253 characters) is reported once, in their words.
  const judged = new Set(errs.map((e) => e.field));
  const validate = validatorFor(model.info.schemaId);
  if (!validate(obj)) {
    const schemaErrs = ajvToFieldErrors(validate.errors ?? [], model.schema, (field) => isSecretPath(model.secretPaths, field));
    errs.push(...schemaErrs.filter((e) => !(e.type === 'TooLong' && judged.has(e.field))));
  }
  errs.push(...checkListTypes(model.schema, obj));
  return [...ratcheted(errs, obj, old), ...model.strategy.validate(obj, old)];
}
