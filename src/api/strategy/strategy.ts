/** Per-kind rules, kept out of the registry and the store as kube keeps them in strategy objects. */
import type { FieldError } from '../field-errors.js';
import type { ResourceInfo } from '../resources.js';
import type { KubeObject } from '../types.js';

export interface Strategy {
  readonly info: ResourceInfo;
  /** Fills in what the server decides on create (a generated key); status is already cleared. */
  prepareForCreate(obj: KubeObject): void;
  /** Rules beyond the schema, on create (old undefined) and update. */
  validate(obj: KubeObject, old?: KubeObject): FieldError[];
  /** Rules about the change itself. */
  validateUpdate(obj: KubeObject, old: KubeObject): FieldError[];
  /** What the client should hear about an accepted object (a Warning header), as kube's WarningsOnCreate/Update. */
  warnings?(obj: KubeObject): string[];
}
