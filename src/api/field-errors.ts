/** Field-level validation errors, rendered the way kube-apiserver's field.Error does. */

export type FieldErrorType =
  | 'Required'
  | 'Invalid'
  | 'TypeInvalid'
  | 'NotSupported'
  | 'Duplicate'
  | 'TooLong'
  | 'TooMany'
  | 'Forbidden';

export interface FieldError {
  type: FieldErrorType;
  /** Dotted path with [i] for list items, e.g. `spec.clusterRoles[1].name`. */
  field: string;
  /** The offending value; omitted (never rendered) for secrets. */
  value?: unknown;
  /** The value exactly as kube prints it, where its rendering is not JSON (e.g. `0x0`). */
  rendered?: string;
  detail?: string;
}

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

const reasons: Record<FieldErrorType, string> = {
  Required: 'FieldValueRequired',
  Invalid: 'FieldValueInvalid',
  TypeInvalid: 'FieldValueTypeInvalid',
  NotSupported: 'FieldValueNotSupported',
  Duplicate: 'FieldValueDuplicate',
  TooLong: 'FieldValueTooLong',
  TooMany: 'FieldValueTooMany',
  Forbidden: 'FieldValueForbidden',
};

const maxRenderedValue = 256;

/**
 * A field path or key as an error names it: cut to 256 characters and `...`, so a key of a
 * megabyte in a body is never a megabyte of message (duplicate and unknown fields, server and CLI).
 */
export function shownName(name: string): string {
  return name.length > maxRenderedValue ? `${name.slice(0, maxRenderedValue)}...` : name;
}

/** Renders a value as kube does (%q for strings), cut short so errors never echo huge input. */
export function renderValue(value: unknown): string {
  let text: string;
  if (value === undefined) text = 'null';
  else if (typeof value === 'string') text = JSON.stringify(value);
  else {
    try {
      text = JSON.stringify(value) ?? String(value);
    } catch {
      text = String(value);
    }
  }
  return text.length > maxRenderedValue ? `${text.slice(0, maxRenderedValue)}...(truncated)` : text;
}

/** The part after `field: `, as kube's ErrorBody. */
export function fieldErrorBody(e: FieldError): string {
  const hasValue = 'value' in e || e.rendered !== undefined;
  const value = e.rendered ?? (hasValue ? renderValue(e.value) : '');
  const detail = e.detail ? `: ${e.detail}` : '';
  switch (e.type) {
    case 'Required':
      return `Required value${detail}`;
    case 'Forbidden':
      return `Forbidden${detail}`;
    case 'TooLong':
      return `Too long${detail}`;
    case 'TooMany':
      return `Too many${hasValue ? `: ${value}` : ''}${detail}`;
    case 'NotSupported':
      return `Unsupported value${hasValue ? `: ${value}` : ''}${detail}`;
    case 'Duplicate':
      return `Duplicate value${hasValue ? `: ${value}` : ''}${detail}`;
    case 'Invalid':
    case 'TypeInvalid':
      return `Invalid value${hasValue ? `: ${value}` : ''}${detail}`;
  }
}

export function fieldErrorToCause(e: FieldError): StatusCause {
  return { reason: reasons[e.type], message: fieldErrorBody(e), field: e.field };
}

/** `a: x` or `[a: x, b: y]`, as kube's aggregate error. */
export function aggregateMessage(errs: FieldError[]): string {
  const parts = errs.map((e) => `${e.field}: ${fieldErrorBody(e)}`);
  return parts.length === 1 ? parts[0]! : `[${parts.join(', ')}]`;
}

/** Joins path segments: `spec` + `users` + 0 -> `spec.users[0]`. */
export function joinPath(base: string, segment: string | number): string {
  if (typeof segment === 'number') return `${base}[${segment}]`;
  return base ? `${base}.${segment}` : segment;
}
