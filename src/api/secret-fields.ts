/**
 * The secret fields of every served kind, derived once from the schemas' `writeOnly`: the
 * reconciler refuses them in git, reports and import drop or redact them, and the log redaction
 * censors them. Adding a writeOnly field to a schema is the only change a new secret needs.
 */
import { resourceModels, type ResourceModel } from './model.js';

let served: ResourceModel[] | undefined;

const servedModels = (): ResourceModel[] => (served ??= Object.values(resourceModels()));

/** Dotted paths of every writeOnly field of the given kinds (default: every served kind), e.g. `spec.identity.connectorData`. */
export function secretFieldPaths(models: ResourceModel[] = servedModels()): string[] {
  return [...new Set(models.flatMap((m) => m.secretPaths.map((p) => p.join('.'))))];
}

/** The last segment of every secret field path (`key`, `connectorData`, ...): what a redactor matches at any depth. */
export function secretFieldNames(models: ResourceModel[] = servedModels()): string[] {
  return [...new Set(secretFieldPaths(models).map((p) => p.slice(p.lastIndexOf('.') + 1)))];
}
