/** Validation of metadata on create and update: kube's ValidateObjectMeta and ValidateObjectMetaUpdate. */
import type { FieldError } from './field-errors.js';
import { dns1123SubdomainErrors, generateNamePrefixErrors, labelValueErrors, qualifiedNameErrors } from './names.js';
import { isJsonMap, type ObjectMeta } from './types.js';
import { valueSetByAnnotation } from './key-types.js';

export const maxAnnotationsBytes = 256 * 1024;

/** The longest value-set-by the server writes: `indirect:<name> via impersonator:<name>`, names up to 1,024 characters. */
const maxSetterLength = 2 * (1024 + 16) + 5;

const invalid = (field: string, value: unknown, messages: string[]): FieldError[] =>
  messages.map((detail) => ({ type: 'Invalid', field, value, detail }));

/** kube-apiserver's TotalAnnotationSizeLimitB: keys and values together, in its words. */
function annotationsSizeErrors(meta: ObjectMeta): FieldError[] {
  let bytes = 0;
  const annotations: Record<string, unknown> = isJsonMap(meta.annotations) ? meta.annotations : {};
  // for...in, not Object.entries: the loop may stop long before the last of 190,000 keys.
  for (const key in annotations) {
    if (!Object.hasOwn(annotations, key)) continue;
    const value = annotations[key];
    // The server's own record of who set a key's value is not the client's to budget: a holder
    // filling the annotations must not make a rotation fail. Only as long as two names (on other
    // kinds a client may write it, and must not pass a large value through: found by a review).
    if (key === valueSetByAnnotation && typeof value === 'string' && value.length <= maxSetterLength) continue;
    bytes += Buffer.byteLength(key) + (typeof value === 'string' ? Buffer.byteLength(value) : 0);
    // Counted no further than the limit: the sum is the whole check, and its cost stays bounded.
    if (bytes > maxAnnotationsBytes) return [{ type: 'TooLong', field: 'metadata.annotations', detail: `may not be more than ${maxAnnotationsBytes} bytes` }];
  }
  return [];
}

/**
 * The metadata bounds a body is held to as soon as it is decoded, before the work that grows with
 * its fields (pruning, validation, managedFields): a body of 190,000 annotations is refused for its
 * size at once, in the words validation would use later.
 */
export function earlyMetadataErrors(body: unknown): FieldError[] {
  if (!isJsonMap(body) || !isJsonMap(body.metadata)) return [];
  return annotationsSizeErrors(body.metadata as ObjectMeta);
}

/** Rules every object's metadata obeys; ajv has already checked the types. */
export function validateObjectMeta(meta: ObjectMeta): FieldError[] {
  const errs: FieldError[] = [];
  // ajv reports wrong types; these rules look only at values of the right type.
  if (typeof meta.generateName === 'string' && meta.generateName) errs.push(...invalid('metadata.generateName', meta.generateName, generateNamePrefixErrors(meta.generateName)));
  if (!meta.name) {
    if (!meta.generateName) errs.push({ type: 'Required', field: 'metadata.name', detail: 'name or generateName is required' });
  } else if (typeof meta.name === 'string') {
    errs.push(...invalid('metadata.name', meta.name, dns1123SubdomainErrors(meta.name)));
  }
  for (const [key, value] of Object.entries(isJsonMap(meta.labels) ? meta.labels : {})) {
    errs.push(...invalid('metadata.labels', key, qualifiedNameErrors(key)));
    if (typeof value === 'string') errs.push(...invalid(`metadata.labels`, value, labelValueErrors(value)));
  }
  for (const key of Object.keys(isJsonMap(meta.annotations) ? meta.annotations : {})) {
    errs.push(...invalid('metadata.annotations', key, qualifiedNameErrors(key.toLowerCase())));
  }
  errs.push(...annotationsSizeErrors(meta));
  (Array.isArray(meta.finalizers) ? meta.finalizers : []).forEach((f, i) => {
    if (typeof f === 'string') errs.push(...invalid(`metadata.finalizers[${i}]`, f, qualifiedNameErrors(f)));
  });
  errs.push(...validateOwnerReferences(meta));
  return errs;
}

function validateOwnerReferences(meta: ObjectMeta): FieldError[] {
  const refs = (Array.isArray(meta.ownerReferences) ? meta.ownerReferences : []).filter(isJsonMap) as NonNullable<
    ObjectMeta['ownerReferences']
  >;
  const errs: FieldError[] = [];
  refs.forEach((ref, i) => {
    const at = `metadata.ownerReferences[${i}]`;
    if (ref.apiVersion === '') errs.push({ type: 'Invalid', field: `${at}.apiVersion`, value: '', detail: 'version must not be empty' });
    if (ref.kind === '') errs.push({ type: 'Invalid', field: `${at}.kind`, value: '', detail: 'kind must not be empty' });
    if (ref.name === '') errs.push({ type: 'Invalid', field: `${at}.name`, value: '', detail: 'name must not be empty' });
    if (ref.uid === '') errs.push({ type: 'Invalid', field: `${at}.uid`, value: '', detail: 'uid must not be empty' });
  });
  const controllers = refs.filter((r) => r.controller === true);
  if (controllers.length > 1) {
    errs.push({
      type: 'Invalid',
      field: 'metadata.ownerReferences',
      value: refs,
      detail: `Only one reference can have Controller set to true. Found "true" in references for ${controllers
        .map((r) => `${r.kind}/${r.name}`)
        .join(' and ')}`,
    });
  }
  return errs;
}

const immutable = (field: string, value: unknown): FieldError => ({ type: 'Invalid', field, value, detail: 'field is immutable' });

/** What an update may not change. uid, creationTimestamp, generation and a deletion already under way were carried over. */
export function validateObjectMetaUpdate(next: ObjectMeta, old: ObjectMeta): FieldError[] {
  const errs: FieldError[] = [];
  if (next.name !== old.name) errs.push(immutable('metadata.name', next.name));
  if (next.uid !== old.uid) errs.push(immutable('metadata.uid', next.uid));
  if (next.creationTimestamp !== old.creationTimestamp) errs.push(immutable('metadata.creationTimestamp', next.creationTimestamp));
  if (next.deletionTimestamp !== old.deletionTimestamp) errs.push(immutable('metadata.deletionTimestamp', next.deletionTimestamp));
  if (next.deletionGracePeriodSeconds !== old.deletionGracePeriodSeconds) {
    errs.push(immutable('metadata.deletionGracePeriodSeconds', next.deletionGracePeriodSeconds));
  }
  if (old.deletionTimestamp) {
    const before = new Set(old.finalizers ?? []);
    const added = (Array.isArray(next.finalizers) ? next.finalizers : []).filter((f) => !before.has(f));
    if (added.length > 0) {
      errs.push({
        type: 'Forbidden',
        field: 'metadata.finalizers',
        detail: `no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}`,
      });
    }
  }
  return errs;
}
