import { describe, expect, it } from 'vitest';
import { invalid, notFound } from '../../src/api/errors.js';
import { fieldErrorBody, type FieldError } from '../../src/api/field-errors.js';

describe('field errors render as kube renders them', () => {
  it.each<[FieldError, string]>([
    [{ type: 'Required', field: 'spec.x' }, 'Required value'],
    [{ type: 'Required', field: 'metadata.name', detail: 'name or generateName is required' }, 'Required value: name or generateName is required'],
    [{ type: 'Invalid', field: 'f', value: 'Abc', detail: 'bad' }, 'Invalid value: "Abc": bad'],
    [{ type: 'Invalid', field: 'f', value: 7, detail: 'bad' }, 'Invalid value: 7: bad'],
    [{ type: 'Invalid', field: 'f', rendered: '0x0', detail: 'must be specified for an update' }, 'Invalid value: 0x0: must be specified for an update'],
    [{ type: 'NotSupported', field: 'f', value: 'x', detail: 'supported values: "a"' }, 'Unsupported value: "x": supported values: "a"'],
    [{ type: 'Duplicate', field: 'f', value: 'ana' }, 'Duplicate value: "ana"'],
    [{ type: 'TooLong', field: 'f', detail: 'may not be more than 5 bytes' }, 'Too long: may not be more than 5 bytes'],
    [{ type: 'Forbidden', field: 'f', detail: 'no' }, 'Forbidden: no'],
    [{ type: 'Invalid', field: 'spec.key', detail: 'secret omitted' }, 'Invalid value: secret omitted'],
  ])('%j', (e, body) => {
    expect(fieldErrorBody(e)).toBe(body);
  });

  it('an Invalid ApiError is a full Status body', () => {
    const status = invalid({ group: 'management.service', kind: 'Team' }, 'x', [
      { type: 'Required', field: 'spec.a' },
      { type: 'Invalid', field: 'spec.b', value: 'v', detail: 'no' },
    ]).toStatus();
    expect(status).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Team.management.service "x" is invalid: [spec.a: Required value, spec.b: Invalid value: "v": no]',
      reason: 'Invalid',
      code: 422,
      details: {
        name: 'x',
        group: 'management.service',
        kind: 'Team',
        causes: [
          { reason: 'FieldValueRequired', message: 'Required value', field: 'spec.a' },
          { reason: 'FieldValueInvalid', message: 'Invalid value: "v": no', field: 'spec.b' },
        ],
      },
    });
    expect(notFound({ group: 'management.service', resource: 'teams' }, 'x').toStatus()).toMatchObject({
      code: 404,
      reason: 'NotFound',
      message: 'teams.management.service "x" not found',
    });
  });
});
