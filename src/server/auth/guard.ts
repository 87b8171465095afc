/**
 * Authorization of one request, asked of authorize() (auth/decision.ts) in two halves around the
 * read: the key's scope before anything is read, the verbs the identity holds on the object once it
 * is (for a write, inside it, through the registry's admission hook). Then the admission chain
 * (server/admission/chain.ts), which every write meets.
 */
import type { FastifyRequest } from 'fastify';
import type { KubeObject, Team } from '../../api/types.js';
import type { Matcher } from '../../api/selectors.js';
import type { Authenticator } from '../../auth/authenticate.js';
import type { Authorizer } from '../../auth/authorize.js';
import type { FailureLimiter } from '../../auth/failure-limit.js';
import type { Identity } from '../../auth/identity.js';
import { allows, authorizeObject, authorizeScope, forbiddenBy, type ResourceAttributes } from '../../auth/decision.js';
import { roleVerbs, type Resource, type Verb } from '../../auth/roles.js';
import type { TemporaryGrant } from '../../auth/temporary-access.js';
import { teamHandsOn } from '../../auth/escalation.js';
import type { TeamIndex } from '../../auth/team-index.js';
import { tooManyRequests } from '../../api/errors.js';
import type { Admission, Admit } from '../../registry/context.js';
import { revealsKeyValue } from '../../registry/storage-errors.js';
import type { KeyQuota } from '../key-quota.js';
import { Holds, reasonAmong, runAdmission, type AdmissionRequest } from '../admission/chain.js';

export interface AuthContext {
  authenticator: Authenticator;
  authorizer: Authorizer;
  teams: TeamIndex;
  /** Failed authentications per client address; absent when unlimited. */
  failures?: FailureLimiter;
  /** Keys per identity; absent when unbounded. */
  keyQuota?: KeyQuota;
  /** Reads an owner named by an ownerReference, if it exists. */
  lookup(kind: string, name: string): Promise<KubeObject | undefined>;
  /** The objects whose ownerReferences name an owner (registry/dependents.ts). */
  dependents(owner: KubeObject): Promise<KubeObject[]>;
  /** The grants of a user's Active AccessRequests now (a consistent read): what a key for the user holds beyond its teams. */
  temporaryGrants(user: string): Promise<TemporaryGrant[]>;
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
    /** The client's address, for the failure budget (endpoint-auth.ts). */
    private readonly client = '',
  ) {}

  /** Seconds the client must wait before it may set a key value (probing), if over its budget. */
  private budgetWait: number | undefined;

  /**
   * What the admission of the write under way (probing) holds until it settles: the key quota's
   * place. Only a write run through probing holds one, so none is held by a write nothing releases.
   */
  private holds: Holds | undefined;

  /**
   * Runs a write that may set an access key's value. Learning that a value is already in use tells
   * the caller it is someone's key, as a successful authentication with it would: such a failure
   * costs the client's failed-authentication budget, and a client over its budget may not try one
   * (admit below), even with a key that works. What its admission held is given back once it has
   * settled, whatever the outcome.
   */
  probing<T>(write: () => Promise<T>): Promise<T> {
    const holds = (this.holds = new Holds());
    return holds.around(() => this.budgeted(write)).finally(() => {
      if (this.holds === holds) this.holds = undefined;
    });
  }

  private async budgeted<T>(write: () => Promise<T>): Promise<T> {
    const failures = this.auth.failures;
    if (!failures || this.resource !== 'ownedaccesskeys') return write();
    // Looked at before this attempt reserves its unit, as authentication does.
    this.budgetWait = failures.retryAfter(this.client);
    const taken = failures.reserve(this.client);
    let failed = false;
    try {
      return await write();
    } catch (err) {
      failed = revealsKeyValue(err);
      throw err;
    } finally {
      failures.settle(this.client, taken, failed);
    }
  }

  private forbidden(verb: Verb, name?: string, subresource?: string, why?: string) {
    return this.auth.authorizer.forbidden(this.who, verb, this.resource, name, subresource, why);
  }

  /** The attributes of this request for one verb (kube's authorizer.Attributes). */
  private attributes(verb: Verb, name?: string, subresource?: string, object?: KubeObject): ResourceAttributes {
    return { user: this.who, verb, resource: this.resource, ...(name ? { name } : {}), ...(subresource ? { subresource } : {}), ...(object ? { object } : {}) };
  }

  /** authorize()'s steps after the scope, which the route asked before reading: throws its 403. */
  private authorizeObject(verb: Verb, object: KubeObject | undefined, name?: string, subresource?: string): void {
    const a = this.attributes(verb, name, subresource, object);
    const d = authorizeObject(this.auth.authorizer, a);
    if (!allows(d)) throw forbiddenBy(this.auth.authorizer, a, d);
  }

  /** Refuses what the key's scope does not allow, before anything is read (authorize()'s first step). */
  scope(verb: Verb, name?: string, subresource?: string): void {
    const a = this.attributes(verb, name, subresource);
    const d = authorizeScope(this.auth.authorizer, a);
    if (d) throw forbiddenBy(this.auth.authorizer, a, d);
  }

  /** Refuses, before anything is read, what none of the (verb, subresource) requests is allowed by the key's scope; the first one's reason is given. */
  scopeOneOf(name: string, requests: [Verb, string?][]): void {
    let first: unknown;
    for (const [verb, subresource] of requests) {
      try {
        this.scope(verb, name, subresource);
        return;
      } catch (err) {
        first ??= err;
      }
    }
    throw first;
  }

  /** Whether the caller holds the verb on every object of the resource (admin roles). */
  holdsEverywhere(verb: Verb): boolean {
    return roleVerbs(this.who.clusterRoles, this.resource).has(verb);
  }

  /** Refuses a verb on the whole collection (deletecollection) to a caller who does not hold it everywhere. */
  requireEverywhere(verb: Verb): void {
    this.authorizeObject(verb, undefined);
  }

  /** Refuses a verb on one object (read already) the caller may not use on it. */
  check(verb: Verb, obj: KubeObject, subresource?: string): void {
    this.authorizeObject(verb, obj, obj.metadata.name, subresource);
  }

  /** The objects of a list or watch the caller may see. */
  filter(): Matcher {
    return this.auth.authorizer.visible(this.who, this.resource);
  }

  /**
   * The check the registry runs inside each write: what only a request has (its key's previous
   * value, its scope, its failure budget), authorization of the verb on the object, then the one
   * admission chain (server/admission/chain.ts).
   */
  admit(through?: 'approval'): Admit {
    return async (registryWrite) => {
      // A refusal, here or by a plugin, means the write will not happen: what it held goes back as failed.
      const holds = this.holds;
      if (!holds) return this.judge(registryWrite, through);
      return holds.judged(() => this.judge(registryWrite, through));
    };
  }

  private async judge(registryWrite: Admission, through?: 'approval'): Promise<void> {
    // A write through the approval subresource is the registry's status write, judged as what was asked.
    const write = through ? { ...registryWrite, subresource: through } : registryWrite;
    const { verb, subresource, old, object } = write;
    const name = (old ?? object)?.metadata.name;
    // A previous value is a value being retired, maybe because it leaked: it may not undo its
    // rotation (set a value back, rotate or confirm, make itself a new key), nor leave a way back in
    // that outlives it (a FederatedCredential minting keys for its user, an AccessRequest asked or
    // approved: found by a review). Reads and teams stay open to it, so jobs not yet switched run.
    const previous = retiredValueKinds.has(this.resource) ? this.who.previousValue : undefined;
    if (previous) throw this.forbidden(verb, name, subresource, previousValueWrites(previous.rotatedAt));
    // Teams stay writable to it (jobs not yet switched run on), but not what hands access on.
    const handsOn = this.who.previousValue && this.resource === 'teams' && !subresource && object ? teamHandsOn(old as Team | undefined, object as Team) : undefined;
    if (handsOn) throw this.forbidden(verb, name, subresource, `this access key's previous value (rotated at ${this.who.previousValue!.rotatedAt}) may not hand access on through a team (${handsOn}): it would outlive the value; use the current value`);
    // The route checked the scope for the verb it was asked (patch); a server-side apply that
    // creates is a create, and the scope must allow that too.
    if (verb === 'create') this.scope(verb, name, subresource);
    const wait = write.setsKey ? this.budgetWait : undefined;
    if (wait !== undefined) throw tooManyRequests(`too many failed attempts from this client; retry after ${wait} seconds`, wait);
    // Judged on the teams as they are: every write before this one is in the index.
    await this.auth.teams.caughtUp();
    const req: AdmissionRequest = { ...write, who: this.who, resource: this.resource, ...(this.holds ? { hold: this.holds.hold } : {}) };
    // Status is written by the server itself (lastActivity); through the API only by admins.
    if (subresource === 'status' || subresource === 'approval') this.authorizeObject(verb, old, name, subresource);
    else {
      // A new object is judged by its content for keys (for another user, a team, ...), by nothing yet for teams.
      const target = verb === 'create' ? (this.resource === 'teams' ? undefined : object) : old;
      if (!allows(authorizeObject(this.auth.authorizer, this.attributes(verb, name, undefined, target)))) {
        // A new key is refused for the reason its content gives.
        throw this.forbidden(verb, name, undefined, verb === 'create' && object ? await reasonAmong(req, this.auth, ['login-keys', 'federated-keys', 'escalation']) : undefined);
      }
    }
    const refused = await runAdmission(req, this.auth);
    if (!refused) return;
    if (typeof refused.refusal !== 'string') throw refused.refusal;
    throw this.forbidden(verb, name, subresource, refused.refusal);
  }
}

/** The kinds a key's previous value may not write: what makes keys or grants access. */
const retiredValueKinds: ReadonlySet<Resource> = new Set<Resource>(['ownedaccesskeys', 'federatedcredentials', 'accessrequests']);

/** Why a request authenticated by a key's previous value may not write access keys (nor the other retiredValueKinds). */
export const previousValueWrites = (rotatedAt: string) =>
  `this access key's previous value (rotated at ${rotatedAt}) may not write access keys, FederatedCredentials or AccessRequests, nor change any key's value; use the current value`;

/** The identity the onRequest hook established; routes under the API prefix always have one. */
export function identityOf(req: FastifyRequest): Identity {
  if (!req.identity) throw new Error('request reached a route without authentication');
  return req.identity;
}
