/** Bearer authentication: one indexed read by the key's SHA-256 hash, no plaintext anywhere. */
import { timingSafeEqual } from 'node:crypto';
import { ApiError, serviceUnavailable, unlessNotFound } from '../api/errors.js';
import { previousValueRefusal, rotationOf } from '../api/key-rotation.js';
import { hashKey, type StoredApiObject } from '../api/secrets.js';
import { isAcceptedKeyValue } from '../api/key-format.js';
import type { FederatedCredential, OwnedAccessKey } from '../api/types.js';
import type { Registry } from '../registry/registry.js';
import type { ActivityRecorder } from './activity.js';
import { expiresAt } from './expiry.js';
import { jobOf, ruleAnnotation, ruleStamp } from '../api/federated-key.js';
import { isLoginKey, loginKeyRefusal } from './login-keys.js';
import { isFederatedKey } from '../api/key-types.js';
import { identityFor, type Identity } from './identity.js';
import { grantsCarried, grantsOfUser, withTemporaryAccess } from './temporary-access.js';
import { valueSetByAnnotation } from '../api/key-types.js';
import type { TeamIndex } from './team-index.js';
import { ownerReferencesOf } from '../api/owner-references.js';
import { teamBinding } from '../registry/team-binding.js';

const unauthorized = (message = 'Unauthorized') => new ApiError(401, 'Unauthorized', message);

/** Why a key made with a Login key stops when that sign-in does (logout, or the provider refusing it). */
export const signInEnded = 'the sign-in this key was made with has ended: run teamkeys login';

type SignIn = NonNullable<Identity['signIn']>;

const withSignIn = (identity: Identity, signIn: SignIn | undefined): Identity => (signIn ? { ...identity, signIn } : identity);

/** The identity of a request made with the key's previous value says so (what it may not do: guard.ts). */
const asPrevious = (identity: Identity, key: OwnedAccessKey, previous: boolean): Identity =>
  previous ? { ...identity, previousValue: { rotatedAt: rotationOf(key)?.rotatedAt ?? 'an unknown time' } } : identity;

/** A stored key as a request with it would be authenticated now (Authenticator.currentIdentity). */
export type KeyNow = { identity: Identity } | { disabled: true } | { ended: true };

/** Whether a stored hash is `hash`, compared in constant time. */
function sameHash(stored: string | undefined, hash: string): boolean {
  const a = Buffer.from(stored ?? '');
  return a.length === hash.length && timingSafeEqual(a, Buffer.from(hash));
}


/** The key an Authorization header carries, if it has the shape of one. */
function bearerKey(authorization: string | undefined): string | undefined {
  const key = authorization?.match(/^Bearer +(\S+)$/i)?.[1];
  return key && isAcceptedKeyValue(key) ? key : undefined;
}

/** How long a key that authenticated counts as known-good to the failure limit. */
const recentMs = 10 * 60_000;
const maxRecent = 10_000;

export class Authenticator {
  /** Hashes of keys that authenticated lately (hashes only), oldest first. */
  private readonly recent = new Map<string, number>();
  /**
   * Identities (but their expiry, which moves with use) by key object: the watch cache hands out one
   * frozen object per key version, so a changed key is a new entry; a team change moves the index's
   * generation and every entry is recomputed.
   */
  private readonly identities = new WeakMap<OwnedAccessKey, { generation: number; identity: Identity }>();

  constructor(
    private readonly registry: Registry,
    private readonly teams: TeamIndex,
    private readonly activity: ActivityRecorder,
    private readonly now: () => Date,
    /** How long a Login key works while its identity cannot be refreshed (login-keys.ts has the default). */
    private readonly identityMaxStalenessMs?: number,
  ) {}

  async authenticate(authorization: string | undefined): Promise<Identity> {
    const { hash, key, signIn, previous } = await this.verify(authorization);
    const now = this.now();
    const name = key.metadata.name!;
    this.activity.touch(name, now, hash, previous);
    this.recent.delete(hash);
    this.recent.set(hash, now.getTime());
    if (this.recent.size > maxRecent) this.recent.delete(this.recent.keys().next().value!);
    return asPrevious(withSignIn(await this.withRequests(this.identityOf(key), now, key, previous), signIn), key, previous);
  }

  /**
   * Authenticates again a key that did before, without counting it as a use (no activity, no
   * failure budget): an open watch asks this, so whatever refuses a key refuses its watches too.
   * `revision`: a store revision the answer is at least as new as (key and teams both).
   */
  async reauthenticate(authorization: string | undefined): Promise<{ identity: Identity; revision: number }> {
    const { key, revision, signIn, previous } = await this.verify(authorization);
    return { identity: asPrevious(withSignIn(await this.withRequests(this.identityOf(key), this.now(), key, previous), signIn), key, previous), revision };
  }

  /**
   * The identity with the membership its user's Active AccessRequests give at `now`: a consistent
   * read, so an approval through another replica counts at once, and judged on each request, so an
   * expired one grants nothing here whether or not its phase says Expired yet.
   */
  private async withRequests(identity: Identity, now: Date, key: OwnedAccessKey, previous: boolean): Promise<Identity> {
    const user = identity.user;
    // A rotation's previous value is being retired, and whoever knows it need not know the new one:
    // the key's setter is the new value's, so the old value carries no temporary access (found by a review).
    if (user === undefined || previous) return identity;
    // Temporary access only adds: a store that cannot list requests now gives the identity its
    // standing rights alone (fail closed), rather than taking every request down with it.
    // The user's Active requests by the watch cache's index: a lookup, not a list of every request
    // (nor of every request of the user: those that ended stay, and cost nothing here).
    const grants = await grantsOfUser(this.registry.accessrequests, user, now).catch(() => []);
    // Only what the key's value setter may hand on: the user, or someone holding the access.
    return withTemporaryAccess(identity, grantsCarried(grants, key, user), this.teams);
  }

  /**
   * The one check of a bearer key both of the above make; 401 with the reason when it fails.
   * `previous`: the header carried the key's previous value (a rotation's overlap), which
   * authenticates as the key itself while key-rotation.ts says it may, every other rule applying.
   */
  private async verify(authorization: string | undefined): Promise<{ hash: string; key: OwnedAccessKey; revision: number; signIn?: SignIn; previous: boolean }> {
    const key = bearerKey(authorization);
    if (!key) throw unauthorized();
    const hash = hashKey(key);
    // A failing store is a 503 the client may retry, converted where every storage error is.
    const { items: found, revision } = await this.registry.ownedaccesskeys.findByIndex(hash);
    if (found.length !== 1) throw unauthorized();
    const stored = found[0]! as StoredApiObject & OwnedAccessKey;
    const previous = !sameHash(stored.sealed?.keyHash, hash);
    if (previous && !sameHash(stored.sealed?.previousKeyHash, hash)) throw unauthorized();
    const name = stored.metadata.name!;
    // Judged on the teams as they are: a membership change made through another replica counts at
    // once, as the key read above did (a consistent read), and at the same revision when it says.
    await this.teams.caughtUp(revision).catch((err: unknown) => {
      throw err instanceof ApiError ? err : serviceUnavailable('the team index cannot be checked against the store; try again', 1);
    });
    const now = this.now();
    // A previous value past its overlap is refused first, naming the rotation: its holder learns
    // that it must take the new value, not the state of the key.
    const rotated = previous ? previousValueRefusal(stored, now) : undefined;
    if (rotated) throw unauthorized(rotated);
    const refusal = keyRefusal(stored, now, this.activity.lastUsed(name), this.teams, this.identityMaxStalenessMs);
    if (refusal) throw unauthorized(refusal);
    const signIn = await this.signInOf(stored, now);
    return { hash, key: stored, revision, previous, ...(signIn ? { signIn } : {}) };
  }

  /**
   * The Login key `key` is, or is tied to (src/registry/keys.ts); 401 when that sign-in
   * has ended. Each owner is one get by name, a consistent read as the key's own was: a sign-in
   * refused or ended through another replica ends the keys made with it at once. An owner key that
   * is gone (or has another uid) refuses too: the garbage collector is about to remove this key.
   */
  private async signInOf(key: OwnedAccessKey, now: Date): Promise<SignIn | undefined> {
    if (isLoginKey(key)) return { name: key.metadata.name!, uid: key.metadata.uid! };
    const keys = this.registry.ownedaccesskeys;
    let signIn: SignIn | undefined;
    // Owners this check cannot read (a list of another shape, written past the API) could be the
    // sign-in or the rule the key must end with: refused rather than read as none.
    if (key.metadata.ownerReferences !== undefined && ownerReferencesOf(key.metadata) !== key.metadata.ownerReferences) throw unauthorized('the access key\'s owner references cannot be read');
    const minted = await this.ruleRefusal(key);
    if (minted) throw unauthorized(minted);
    for (const ref of ownerReferencesOf(key.metadata)) {
      if (ref.apiVersion !== keys.info.apiVersion || ref.kind !== 'OwnedAccessKey') continue;
      const owner = (await keys.get(ref.name).catch(unlessNotFound)) as OwnedAccessKey | undefined;
      if (owner?.metadata.uid !== ref.uid) throw unauthorized(`the access key this key was made with ("${ref.name}") no longer exists`);
      if (isFederatedKey(owner)) {
        // Made with a key a FederatedCredential minted: it ends with that key and that rule.
        if (keyRefusal(owner, now, this.activity.lastUsed(ref.name), this.teams, this.identityMaxStalenessMs)) throw unauthorized(`the access key this key was made with ("${ref.name}") no longer works`);
        const ownerMinted = await this.ruleRefusal(owner);
        if (ownerMinted) throw unauthorized(`the access key this key was made with ("${ref.name}") no longer works: ${ownerMinted}`);
        // What this key makes is tied to the minted key too, as to a sign-in: tied to nothing, a key
        // made by a key the job made outlived the rule and the minted key (found by a review).
        signIn ??= { name: ref.name, uid: ref.uid };
        continue;
      }
      if (!isLoginKey(owner)) continue;
      if (keyRefusal(owner, now, this.activity.lastUsed(ref.name), this.teams, this.identityMaxStalenessMs)) throw unauthorized(signInEnded);
      signIn ??= { name: ref.name, uid: ref.uid };
    }
    // A key a FederatedCredential minted ties the keys it makes to itself, as a Login key does: a
    // job's key made a user key that worked on after the rule was narrowed or deleted (found by a review).
    if (isFederatedKey(key)) return { name: key.metadata.name!, uid: key.metadata.uid! };
    return signIn;
  }

  /**
   * Why a key a FederatedCredential minted may not act now, or undefined: the rule is gone (or is
   * another of its name), is being deleted, or changed since the mint (its generation, recorded on
   * the key). The minted key never outlives its rule (DECISIONS.md 11): a rule held by a finalizer
   * kept its keys working until their ttl, as did one narrowed during an incident (found by a
   * review). One consistent get by name for each such owner, as for a Login key's owner.
   */
  private async ruleRefusal(key: OwnedAccessKey): Promise<string | undefined> {
    for (const ref of ownerReferencesOf(key.metadata)) {
      if (ref.kind !== 'FederatedCredential' || ref.apiVersion !== this.registry.federatedcredentials.info.apiVersion) continue;
      const rule = (await this.registry.federatedcredentials.get(ref.name).catch(unlessNotFound)) as FederatedCredential | undefined;
      if (rule?.metadata.uid !== ref.uid) return `the FederatedCredential this key was minted by ("${ref.name}") no longer exists`;
      if (rule.metadata.deletionTimestamp) return `the FederatedCredential this key was minted by ("${ref.name}") is being deleted`;
      if (key.metadata.annotations?.[ruleAnnotation] !== ruleStamp(rule)) return `the FederatedCredential this key was minted by ("${ref.name}") changed since`;
      // The exchange checks the rule's team before it mints, and the mint binds the key to the team
      // live then: a team deleted and created again in between gave a key of the new team on a rule
      // that trusts the old one (found by a review). The key's team must be the rule's, by uid.
      const team = rule.spec?.team;
      if (team && teamBinding(rule, team)?.uid !== teamBinding(key, team)?.uid) return `the FederatedCredential this key was minted by ("${ref.name}") trusts another team "${team}" than this key's: the team was deleted and created again`;
    }
    return undefined;
  }

  /**
   * Whether the header carries a key that authenticated in the last minutes: such a key is still
   * checked in full, but a client over its failure budget is not refused it.
   */
  recentlyValid(authorization: string | undefined): boolean {
    const key = bearerKey(authorization);
    if (!key) return false;
    const at = this.recent.get(hashKey(key));
    return at !== undefined && this.now().getTime() - at < recentMs;
  }

  /** Who the key acts for, as the team index sees it now (503 while the index is incomplete). */
  identityOf(key: OwnedAccessKey): Identity {
    this.teams.require();
    const generation = this.teams.generation;
    // Only an object no one can change may stand for its key version.
    const frozen = Object.isFrozen(key);
    let known = frozen ? this.identities.get(key) : undefined;
    if (known?.generation !== generation) {
      known = { generation, identity: this.baseIdentity(key) };
      if (frozen) this.identities.set(key, known);
    }
    const identity: Identity = { ...known.identity };
    const expires = expiresAt(key, this.activity.lastUsed(key.metadata.name!));
    if (expires !== undefined) identity.expiresAt = expires;
    return identity;
  }

  /**
   * What the stored key `name` is now, as a request with it would be authenticated (its standing
   * rights; no use counted): who it acts for, or `disabled`, or `ended` (gone, expired, its sign-in
   * ended, refused otherwise). Asked of an earlier approver's key when its approval is counted
   * again: a Login key's groups follow the identity provider, so a group lost since stops counting.
   */
  async currentIdentity(name: string): Promise<KeyNow> {
    const key = (await this.registry.ownedaccesskeys.get(name).catch(unlessNotFound)) as OwnedAccessKey | undefined;
    return key ? this.keyNow(key) : { ended: true };
  }

  /** currentIdentity of a key already read. */
  private async keyNow(key: OwnedAccessKey): Promise<KeyNow> {
    if (key.spec?.disabled) return { disabled: true };
    const now = this.now();
    if (keyRefusal(key, now, this.activity.lastUsed(key.metadata.name!), this.teams, this.identityMaxStalenessMs)) return { ended: true };
    try {
      await this.signInOf(key, now);
    } catch (err) {
      if (err instanceof ApiError && err.code === 401) return { ended: true };
      throw err;
    }
    return { identity: this.identityOf(key) };
  }

  /**
   * Who `user`'s newest working Login key acts for now, if any: the person as the identity provider
   * says now. Asked when the key an approval was made with has ended: signing in again deletes the
   * CLI's previous Login key, and with it the key an approval names.
   */
  async currentSignIn(user: string): Promise<Identity | undefined> {
    const keys = ((await this.registry.ownedaccesskeys.byField('holder', user)) as OwnedAccessKey[])
      .filter((k) => isLoginKey(k) && k.spec.user === user && !k.spec.disabled)
      .sort((a, b) => (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? ''));
    for (const key of keys) {
      // The key as the index read it: read again by name, it was the same read twice.
      const now = await this.keyNow(key);
      if ('identity' in now) return now.identity;
    }
    return undefined;
  }

  /** The identity without its expiry. */
  private baseIdentity(key: OwnedAccessKey): Identity {
    const identity = identityFor(key.spec, this.teams, key.metadata.name!);
    const job = jobOf(key);
    const setter = key.metadata.annotations?.[valueSetByAnnotation];
    return { ...identity, ...(job === undefined ? {} : { job }), ...(setter === undefined ? {} : { valueSetBy: setter }) };
  }
}

/**
 * Why a stored key may not authenticate at `now`, or undefined when it may: disabled, being
 * deleted, expired, or a team key not bound to the team of its name as it exists now (a team
 * deleted and re-created under the same name has a new uid, and its old keys stay dead).
 */
export function keyRefusal(key: OwnedAccessKey, now: Date, lastUseMs: number | undefined, teams: Pick<TeamIndex, 'get'>, identityMaxStalenessMs?: number): string | undefined {
  if (key.spec?.disabled) return 'access key is disabled';
  if (key.metadata.deletionTimestamp) return 'access key is being deleted';
  const expires = expiresAt(key, lastUseMs);
  if (expires !== undefined && now.getTime() > expires) return 'access key expired';
  const login = loginKeyRefusal(key, now, identityMaxStalenessMs);
  if (login) return login;
  const team = key.spec?.team;
  if (team) {
    const live = teams.get(team);
    const bound = ownerReferencesOf(key.metadata).some((r) => r.kind === 'Team' && r.name === team && r.uid === live?.metadata.uid);
    if (!live || !bound) return "access key's team no longer exists";
    if (live.metadata.deletionTimestamp) return "access key's team is being deleted";
  }
  return undefined;
}
