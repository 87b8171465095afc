/** The kinds this API serves, and the names kube clients know them by. */

export const defaultGroup = 'management.service';
export const version = 'v1';
/** Where the API is served below a server's root (teamkeys serve), and what a bare --server URL gets. */
export const apiPrefix = '/kubernetes/management';

/** The API root for a server URL, as users type it: https://host:8080 means https://host:8080/kubernetes/management. */
export function apiRoot(server: string): string {
  const url = new URL(server);
  const path = url.pathname.replace(/\/+$/, '');
  return `${url.origin}${path === '' ? apiPrefix : path}`;
}

/** Where /auth (sign-in, the token exchange) lives on a server: the origin (and any path before the API prefix). */
export function authBase(server: string): string {
  const root = apiRoot(server);
  return root.endsWith(apiPrefix) ? root.slice(0, -apiPrefix.length) : new URL(root).origin;
}

export type SchemaId = 'team.schema.json' | 'ownedaccesskey.schema.json' | 'federatedcredential.schema.json' | 'accessrequest.schema.json';

export interface ResourceInfo {
  group: string;
  version: string;
  /** `group/version`, as objects carry it. */
  apiVersion: string;
  kind: 'Team' | 'OwnedAccessKey' | 'FederatedCredential' | 'AccessRequest';
  listKind: string;
  plural: 'teams' | 'ownedaccesskeys' | 'federatedcredentials' | 'accessrequests';
  singular: string;
  shortNames: string[];
  schemaId: SchemaId;
}

/** The resources, served under `group` (a setting, so the same code can serve another group name). */
export function resourcesFor(group: string = defaultGroup): { teams: ResourceInfo; ownedaccesskeys: ResourceInfo; federatedcredentials: ResourceInfo; accessrequests: ResourceInfo } {
  const apiVersion = `${group}/${version}`;
  return {
    teams: {
      group,
      version,
      apiVersion,
      kind: 'Team',
      listKind: 'TeamList',
      plural: 'teams',
      singular: 'team',
      shortNames: ['tm'],
      schemaId: 'team.schema.json',
    },
    ownedaccesskeys: {
      group,
      version,
      apiVersion,
      kind: 'OwnedAccessKey',
      listKind: 'OwnedAccessKeyList',
      plural: 'ownedaccesskeys',
      singular: 'ownedaccesskey',
      shortNames: ['oak'],
      schemaId: 'ownedaccesskey.schema.json',
    },
    // Trust rules for CI job tokens (docs/federated.md): after the keys, as they mint keys.
    federatedcredentials: {
      group,
      version,
      apiVersion,
      kind: 'FederatedCredential',
      listKind: 'FederatedCredentialList',
      plural: 'federatedcredentials',
      singular: 'federatedcredential',
      shortNames: ['fedcred'],
      schemaId: 'federatedcredential.schema.json',
    },
    accessrequests: {
      group,
      version,
      apiVersion,
      kind: 'AccessRequest',
      listKind: 'AccessRequestList',
      plural: 'accessrequests',
      singular: 'accessrequest',
      shortNames: ['areq'],
      schemaId: 'accessrequest.schema.json',
    },
  };
}

/** Every kind the API serves, by kind and by plural. */
export type ApiKind = ResourceInfo['kind'];
export type ApiPlural = ResourceInfo['plural'];

/**
 * The kinds declared in Git and reconciled (AccessRequest is served but never declared: a request
 * lives only on the server, so a prune never races it).
 */
export type Kind = Exclude<ApiKind, 'AccessRequest'>;
export type Plural = Exclude<ApiPlural, 'accessrequests'>;

/**
 * The kind table of the declared kinds: owners before what they own (teams before their keys), so
 * a loop over it creates in a safe order and deletes in the reverse. Code that needs "which
 * plural", "which kind" or "every kind" reads it here instead of naming the kinds.
 */
export const servedKinds: readonly { kind: Kind; plural: Plural }[] = [
  { kind: 'Team', plural: 'teams' },
  { kind: 'OwnedAccessKey', plural: 'ownedaccesskeys' },
  { kind: 'FederatedCredential', plural: 'federatedcredentials' },
];

/** The info of a kind declared in Git. */
export type DeclaredInfo = ResourceInfo & { kind: Kind; plural: Plural };

/** Every plural the API serves: the declared kinds, then the served-only ones. */
export const apiPlurals: readonly ApiPlural[] = Object.values(resourcesFor()).map((r) => r.plural);

/** Every served plural, owners first. */
export const servedPlurals: readonly Plural[] = servedKinds.map((k) => k.plural);

/** The plural of a served kind, or undefined for a kind this API does not serve. */
export function pluralOfKind(kind: string): Plural | undefined {
  return servedKinds.find((k) => k.kind === kind)?.plural;
}

/** The kind of a served plural. */
export function kindOfPlural<P extends ApiPlural>(plural: P): P extends Plural ? Kind : ApiKind {
  return Object.values(resourcesFor()).find((k) => k.plural === plural)!.kind as P extends Plural ? Kind : ApiKind;
}
