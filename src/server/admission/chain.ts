/**
 * The one admission chain every write meets, as kube-apiserver's: an ordered list of named
 * plugins, each judging the exact objects of the write (inside it, through the registry's admit
 * hook) and returning a refusal or nothing. Every verb and subresource of every kind runs it
 * (create, update, each patch type, apply, rotation, delete, deletecollection: server/auth/guard.ts
 * after authorization), and so does sign-in's mint (src/signin/mint.ts), which names the plugins it
 * is exempt from instead of going around the chain. A refusal is data: a reason (403 Forbidden,
 * worded by the caller) or a whole ApiError (a 422 naming fields).
 */
import type { TemporaryGrant } from '../../auth/temporary-access.js';
import { ApiError } from '../../api/errors.js';
import type { KubeObject } from '../../api/types.js';
import type { Authorizer } from '../../auth/authorize.js';
import type { Identity } from '../../auth/identity.js';
import type { Resource } from '../../auth/roles.js';
import type { TeamIndex } from '../../auth/team-index.js';
import type { Admission, Admit } from '../../registry/context.js';
import type { KeyQuota } from '../key-quota.js';
import { accessRequestsPlugin } from './access-requests.js';
import { cascadePlugin } from './cascade.js';
import { escalationPlugin } from './escalation.js';
import { federatedKeysPlugin } from './federated-keys.js';
import { gitopsSourcePlugin } from './gitops-source.js';
import { keyQuotaPlugin } from './key-quota.js';
import { loginKeysPlugin } from './login-keys.js';
import { ownerReferencesPlugin, ownershipPlugin } from './owner-references.js';
import { signInTiePlugin } from './sign-in-tie.js';

/** What the plugins read besides the write: the world as the server sees it. */
export interface AdmissionContext {
  authorizer: Authorizer;
  teams: TeamIndex;
  /** Keys per identity; absent when unbounded. */
  keyQuota?: KeyQuota;
  /** Reads an object of this API by kind and name, if it exists. */
  lookup(kind: string, name: string): Promise<KubeObject | undefined>;
  /** The objects whose ownerReferences name an owner (registry/dependents.ts). */
  dependents(owner: KubeObject): Promise<KubeObject[]>;
  /** The grants of a user's Active AccessRequests now (a consistent read). */
  temporaryGrants(user: string): Promise<TemporaryGrant[]>;
  now?: () => Date;
}

/** One write as the chain judges it: the registry's Admission, who writes it, and of which kind. */
export interface AdmissionRequest extends Omit<Admission, 'subresource'> {
  /** The registry's subresource, or the one the request named when it writes through another (an AccessRequest's approval writes its status). */
  subresource?: 'status' | 'approval';
  who: Identity;
  resource: Resource;
  /** A key the write replaces (a sign-in's previous Login key): not counted by the quota. */
  replaces?: string;
  /** Keeps what a plugin holds for the write (the quota's place) until the write has settled (Holds). */
  hold?: (release: Release) => void;
}

/** Gives back what a plugin held for a write; `failed`: admission refused it, so nothing was written. */
export type Release = (failed: boolean) => void;

/**
 * What the admission of one write holds until the write has settled: the key quota's places
 * (server/key-quota.ts). Whoever runs a write through the chain with `hold` judges it in `judged`
 * (a refusal gives the places back as failed: the write will not happen) and runs the write in
 * `around`, which gives them back once it has settled. A write that fails after it was admitted may
 * have committed (a lost answer to COMMIT), so `around` gives its places back as stored: counted
 * by the writes that read them while held, never a key past the bound.
 */
export class Holds {
  private releases: Release[] = [];

  readonly hold = (release: Release): void => {
    this.releases.push(release);
  };

  release(failed: boolean): void {
    for (const release of this.releases.splice(0)) release(failed);
  }

  /** Runs one admission of the write: if it refuses (throws), what the write held is given back as failed. */
  async judged(admission: () => Promise<void>): Promise<void> {
    try {
      await admission();
    } catch (err) {
      this.release(true);
      throw err;
    }
  }

  /** Runs the write, then gives back what its admission held (as stored: see above). */
  async around<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } finally {
      this.release(false);
    }
  }
}

export type Verdict = string | ApiError | undefined;

export interface AdmissionPlugin {
  readonly name: PluginName;
  admit(req: AdmissionRequest, ctx: AdmissionContext): Verdict | Promise<Verdict>;
}

export type PluginName = 'login-keys' | 'federated-keys' | 'escalation' | 'key-quota' | 'ownership' | 'gitops-source' | 'sign-in-tie' | 'owner-references' | 'cascade' | 'access-requests';

/** The chain, in order: the first refusal ends it. */
export const admissionChain: readonly AdmissionPlugin[] = [loginKeysPlugin, federatedKeysPlugin, escalationPlugin, accessRequestsPlugin, keyQuotaPlugin, ownershipPlugin, gitopsSourcePlugin, signInTiePlugin, ownerReferencesPlugin, cascadePlugin];

/** The first refusal of the chain, with the plugin that gave it, or undefined when the write is admitted. */
export async function runAdmission(req: AdmissionRequest, ctx: AdmissionContext, exempt: readonly PluginName[] = []): Promise<{ plugin: PluginName; refusal: string | ApiError } | undefined> {
  for (const plugin of admissionChain) {
    if (exempt.includes(plugin.name)) continue;
    const refusal = await plugin.admit(req, ctx);
    if (refusal !== undefined) return { plugin: plugin.name, refusal };
  }
  return undefined;
}

/**
 * The admission of an access key the server mints for someone (a sign-in's Login key, the token
 * exchange's key): the chain less `exempt`, judged for `who`, its quota place held in `holds`
 * (whose `around` runs the mint), a string refusal a 403 worded by `word`.
 */
export function keyMintAdmission(
  ctx: AdmissionContext,
  who: Identity,
  holds: Holds,
  exempt: readonly PluginName[],
  word: (refusal: string) => string,
  extra: Pick<AdmissionRequest, 'replaces'> = {},
): Admit {
  return (write) =>
    holds.judged(async () => {
      const refused = await runAdmission({ ...write, who, resource: 'ownedaccesskeys', hold: holds.hold, ...extra }, ctx, exempt);
      if (!refused) return;
      if (typeof refused.refusal !== 'string') throw refused.refusal;
      throw new ApiError(403, 'Forbidden', word(refused.refusal));
    });
}

/** The reason of the first refusal among `only`, for a 403 that says why a create is not allowed. */
export async function reasonAmong(req: AdmissionRequest, ctx: AdmissionContext, only: readonly PluginName[]): Promise<string | undefined> {
  const refused = await runAdmission(req, ctx, admissionChain.map((p) => p.name).filter((n) => !only.includes(n)));
  return typeof refused?.refusal === 'string' ? refused.refusal : undefined;
}

/** The owner-admission view of a request (server/owner-admission.ts). */
export const ownersOf = (req: AdmissionRequest, ctx: AdmissionContext) => ({ who: req.who, resource: req.resource, authorizer: ctx.authorizer, lookup: ctx.lookup, dependents: ctx.dependents });

export const nowOf = (ctx: AdmissionContext): Date => (ctx.now ?? (() => new Date()))();
