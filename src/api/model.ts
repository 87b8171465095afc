/** Everything the server knows about a kind, assembled once from resources, strategies and schemas. */
import { structuralSchema, type StructuralSchema } from './schema/load.js';
import { authoritativePaths, writeOnlyPaths } from './schema/walk.js';
import { defaultGroup, resourcesFor, type ResourceInfo } from './resources.js';
import { federatedCredentialStrategy } from './strategy/federatedcredential.js';
import { ownedAccessKeyStrategy, type AccessKeyPolicy } from './strategy/ownedaccesskey.js';
import type { Strategy } from './strategy/strategy.js';
import { teamStrategy } from './strategy/team.js';

export interface ResourceModel {
  info: ResourceInfo;
  strategy: Strategy;
  schema: StructuralSchema;
  /** Write-only (secret) field paths, from the schema. */
  secretPaths: string[][];
  /** Fields where git's value is the whole value (`x-teamkeys-authoritative`), from the schema. */
  authoritativePaths: string[][];
}

export function resourceModels(
  group: string = defaultGroup,
  keyPolicy: AccessKeyPolicy = {},
): { teams: ResourceModel; ownedaccesskeys: ResourceModel; federatedcredentials: ResourceModel } {
  const infos = resourcesFor(group);
  const model = (info: ResourceInfo, strategy: Strategy): ResourceModel => {
    const schema = structuralSchema(info.schemaId);
    return { info, strategy, schema, secretPaths: writeOnlyPaths(schema), authoritativePaths: authoritativePaths(schema) };
  };
  return {
    teams: model(infos.teams, teamStrategy(infos.teams)),
    ownedaccesskeys: model(infos.ownedaccesskeys, ownedAccessKeyStrategy(infos.ownedaccesskeys, keyPolicy)),
    federatedcredentials: model(infos.federatedcredentials, federatedCredentialStrategy(infos.federatedcredentials)),
  };
}
