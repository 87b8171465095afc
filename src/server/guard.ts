/**
 * Authorization of one request: the key's scope first, then the verbs the identity holds on the
 * object (checked inside the write, through the registry's admission hook), then escalation.
 */
import type { FastifyRequest } from 'fastify';
import { invalid } from '../api/errors.js';
import { kindOfPlural, pluralOfKind } from '../api/resources.js';
import type { KubeObject, Team } from '../api/types.js';
import type { Authenticator } from '../auth/authenticate.js';
import type { Authorizer } from '../auth/authorize.js';
import { asKey, keyEscalation, teamEscalation } from '../auth/escalation.js';
import type { FailureLimiter } from '../auth/failure-limit.js';
import type { Identity } from '../auth/identity.js';
import { roleVerbs, type Resource, type Verb } from '../auth/roles.js';
import { scopeDenial } from '../auth/scope.js';
import type { TeamIndex } from '../auth/team-index.js';
import type { Admit } from '../registry/admission.js';

export interface AuthContext {
  authenticator: Authenticator;
  authorizer: Authorizer;
  teams: TeamIndex;
  /** Failed authentications per client address; absent when unlimited. */
  failures?: FailureLimiter;
  /** Reads an owner named by an ownerReference, if it exists. */
  lookup(kind: string, name: string): Promise<KubeObject | undefined>;
  now?: () => Date;
}

declare module 'fastify' {
  interface FastifyRequest {
    identity?: Identity;
  }
}

export class Guard {
  constructor(
    private readonly auth: AuthContext,
    readonly who: Identity,
    private readonly resource: Resource,
  ) {}

  private forbidden(verb: Verb, name?: string, subresource?: string, why?: string) {
    return this.auth.authorizer.forbidden(this.who, verb, this.resource, name, subresource, why);
  }

  /** Refuses what the key's scope does not allow, before anything is read. */
  scope(verb: Verb, name?: string, subresource?: string): void {
    const group = this.auth.authorizer.group;
    const why = scopeDenial(this.who.scope, { verb, group, resource: this.resource, ...(name ? { name } : {}), ...(subresource ? { subresource } : {}) });
    if (why) throw this.forbidden(verb, name, subresource, why);
  }

  /** Whether the caller holds the verb on every object of the resource (admin roles). */
  holdsEverywhere(verb: Verb): boolean {
    return roleVerbs(this.who.clusterRoles, this.resource).has(verb);
  }

  requireEverywhere(verb: Verb): void {
    if (!this.holdsEverywhere(verb)) throw this.forbidden(verb);
  }

  /** Refuses a read of one object the caller may not see. */
  check(verb: Verb, obj: KubeObject, subresource?: string): void {
    if (!this.auth.authorizer.allowed(this.who, verb, this.resource, obj, subresource)) throw this.forbidden(verb, obj.metadata.name, subresource);
  }

  /** The objects of a list or watch the caller may see. */
  filter(): (obj: KubeObject) => boolean {
    return this.auth.authorizer.visible(this.who, this.resource);
  }

  /**
   * Setting blockOwnerDeletion lets the object hold its owner's deletion back, so it needs delete
   * permission on the owner; without it the write is a 422 (the API document's rule).
   */
  private async checkBlockOwnerDeletion(old: KubeObject | undefined, object: KubeObject): Promise<void> {
    const refs = object.metadata.ownerReferences ?? [];
    for (const [i, ref] of refs.entries()) {
      if (ref.blockOwnerDeletion !== true) continue;
      if (old?.metadata.ownerReferences?.some((r) => r.uid === ref.uid && r.blockOwnerDeletion === true)) continue;
      const resource: Resource | undefined = pluralOfKind(ref.kind);
      const owner = resource ? ((await this.auth.lookup(ref.kind, ref.name)) ?? { apiVersion: ref.apiVersion, kind: ref.kind, metadata: { name: ref.name } }) : undefined;
      if (resource && owner && this.auth.authorizer.allowed(this.who, 'delete', resource, owner)) continue;
      const kind = kindOfPlural(this.resource);
      throw invalid({ group: this.auth.authorizer.group, kind }, object.metadata.name ?? '', [
        {
          type: 'Forbidden',
          field: `metadata.ownerReferences[${i}].blockOwnerDeletion`,
          detail: `setting blockOwnerDeletion requires permission to delete the owner ${ref.kind} "${ref.name}"`,
        },
      ]);
    }
  }

  /** The admission check the registry runs inside each write. */
  admit(): Admit {
    const { authorizer, teams } = this.auth;
    return async ({ verb, subresource, old, object, setsKey }) => {
      const name = (old ?? object)?.metadata.name;
      // The route checked the scope for the verb it was asked (patch); a server-side apply that
      // creates is a create, and the scope must allow that too.
      if (verb === 'create') this.scope(verb, name, subresource);
      // Judged on the teams as they are: every write before this one is in the index.
      await teams.caughtUp();
      // Status is written by the server itself (lastActivity); through the API only by admins, and a
      // later lastActivity keeps a key alive longer: that is a grant like any other.
      if (subresource === 'status') {
        if (!this.holdsEverywhere(verb)) throw this.forbidden(verb, name, subresource);
        if (this.resource === 'ownedaccesskeys' && old && object) {
          const why = keyEscalation(this.who, authorizer, teams, asKey(old), asKey(object)!, { setsKey: false, now: (this.auth.now ?? (() => new Date()))() });
          if (why) throw this.forbidden(verb, name, subresource, why);
        }
        return;
      }
      // Where the two kinds really differ (what a new object is judged by, which escalation rules
      // apply) the difference stays spelled out here: it is policy, not a lookup the kind table could hold.
      const target = verb === 'create' ? (this.resource === 'teams' ? undefined : object) : old;
      const why = !object
        ? undefined
        : this.resource === 'teams'
          ? teamEscalation(this.who, authorizer, teams, old as Team | undefined, object as Team)
          : keyEscalation(this.who, authorizer, teams, asKey(old), asKey(object)!, { setsKey: setsKey === true, now: (this.auth.now ?? (() => new Date()))() });
      // A new key is refused for the reason its content gives (for another user, a team, ...).
      if (!authorizer.allowed(this.who, verb, this.resource, target)) throw this.forbidden(verb, name, undefined, verb === 'create' ? why : undefined);
      if (why) throw this.forbidden(verb, name, undefined, why);
      if (object) await this.checkBlockOwnerDeletion(old, object);
    };
  }
}

/** The identity the onRequest hook established; routes under the API prefix always have one. */
export function identityOf(req: FastifyRequest): Identity {
  if (!req.identity) throw new Error('request reached a route without authentication');
  return req.identity;
}
