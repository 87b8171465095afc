/** Everything the server knows about a kind, assembled once from resources, strategies and schemas. */
import { structuralSchema, type StructuralSchema } from './schema/load.js';
import { authoritativePaths, writeOnlyPaths } from './schema/walk.js';
import { defaultGroup, resourcesFor, type DeclaredInfo, type ResourceInfo } from './resources.js';
import { accessRequestStrategy } from './strategy/accessrequest.js';
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

/** The model of a kind declared in Git (what the reconciler plans). */
export type DeclaredModel = ResourceModel & { info: DeclaredInfo };

function model<I extends ResourceInfo>(info: I, strategy: Strategy): ResourceModel & { info: I } {
  const schema = structuralSchema(info.schemaId);
  return { info, strategy, schema, secretPaths: writeOnlyPaths(schema), authoritativePaths: authoritativePaths(schema) };
}

/** The kinds declared in Git. */
export function resourceModels(
  group: string = defaultGroup,
  keyPolicy: AccessKeyPolicy = {},
): { teams: DeclaredModel; ownedaccesskeys: DeclaredModel; federatedcredentials: DeclaredModel } {
  const infos = resourcesFor(group);
  return {
    teams: model(infos.teams as DeclaredInfo, teamStrategy(infos.teams)),
    ownedaccesskeys: model(infos.ownedaccesskeys as DeclaredInfo, ownedAccessKeyStrategy(infos.ownedaccesskeys, keyPolicy)),
    federatedcredentials: model(infos.federatedcredentials as DeclaredInfo, federatedCredentialStrategy(infos.federatedcredentials)),
  };
}

/** Every kind the server serves: the declared ones and AccessRequest, which lives only on the server. */
export function servedModels(group: string = defaultGroup, keyPolicy: AccessKeyPolicy = {}): { teams: DeclaredModel; ownedaccesskeys: DeclaredModel; federatedcredentials: DeclaredModel; accessrequests: ResourceModel } {
  const info = resourcesFor(group).accessrequests;
  return { ...resourceModels(group, keyPolicy), accessrequests: model(info, accessRequestStrategy(info)) };
}
