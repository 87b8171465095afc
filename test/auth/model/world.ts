/**
 * Generators of small worlds for the escalation model: teams with members, groups, owners, access
 * rules and cluster roles; keys with users, teams, groups, scopes, ttls; and random writes by
 * random keys. Names come from small pools so writes collide with what exists.
 */
import fc from 'fast-check';

export const users = ['u1', 'u2', 'u3', 'u4'];
export const groups = ['g1', 'g2'];
export const teamNames = ['t1', 't2', 't3', 't4'];
export const roles = ['management-admin', 'teams-admin', 'teams-viewer', 'teams-creator', 'accesskeys-admin', 'impersonator', 'cluster-admin'];
/** Roles this API does not interpret (they grant access to clusters elsewhere). */
export const opaqueRoles = ['cluster-admin'];
export const verbs = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'];

export type Spec = Record<string, unknown>;
export interface TeamSeed {
  name: string;
  spec: Spec;
}
export interface KeySeed {
  name: string;
  spec: Spec;
}

const subset = <T>(items: T[], max = 2) => fc.subarray(items, { maxLength: max });
/** Mostly empty: worlds where everyone is an admin find nothing. */
const sparse = <T>(arb: fc.Arbitrary<T[]>) => fc.oneof({ weight: 3, arbitrary: fc.constant([] as T[]) }, { weight: 2, arbitrary: arb });

const accessRule = fc.record({
  verbs: fc.oneof(subset(verbs, 3).filter((v) => v.length > 0), fc.constant(['get', 'update', 'patch']), fc.constant(['*'])),
  users: subset(users),
  teams: subset(teamNames),
});

const owner = fc.oneof(
  fc.constant(undefined),
  fc.constantFrom(...users).map((user) => ({ user })),
  { weight: 2, arbitrary: fc.constantFrom(...teamNames).map((team) => ({ team })) },
);
const teamRoles = fc.oneof(fc.constant([] as string[]), subset(roles.slice(1), 2));

/** One field of a team spec, for patches; the whole spec is all of them. */
export const teamField = fc.oneof(
  { weight: 3, arbitrary: subset(users, 3).map((v) => ({ users: v })) },
  subset(groups).map((v) => ({ groups: v })),
  teamRoles.map((v) => ({ clusterRoles: v.map((name) => ({ name })) })),
  owner.map((v) => ({ owner: v ?? null })),
  fc.array(accessRule, { maxLength: 2 }).map((v) => ({ access: v })),
);

export const teamSpec: fc.Arbitrary<Spec> = fc
  .record({
    users: subset(users, 3),
    groups: sparse(subset(groups, 1)),
    clusterRoles: teamRoles.map((v) => v.map((name) => ({ name }))),
    owner,
    access: fc.array(accessRule, { maxLength: 2 }),
  })
  .map((s) => Object.fromEntries(Object.entries(s).filter(([, v]) => v !== undefined && !(Array.isArray(v) && v.length === 0))));

const scopeRule = fc.record({
  verbs: subset(verbs, 3),
  resources: fc.constantFrom('teams', 'ownedaccesskeys').map((r) => [{ group: 'management.service', resources: [r] }]),
});

export const scope = fc.oneof(
  { weight: 3, arbitrary: fc.constant(undefined) },
  fc.constant({ roles: [{ role: 'cli' }] }),
  fc.array(scopeRule, { minLength: 1, maxLength: 2 }).map((rules) => ({ rules })),
  fc.constant({ projects: [{ project: 'p1' }] }),
);

const lifetime = fc.oneof(
  { weight: 3, arbitrary: fc.constant({}) },
  fc.constant({ ttl: 3600 }),
  fc.constant({ ttl: 600, ttlAfterLastActivity: true }),
);

export const keySpec: fc.Arbitrary<Spec> = fc
  .tuple(
    fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...users).map((user) => ({ user })) }, fc.constantFrom(...teamNames).map((team) => ({ team }))),
    sparse(subset(groups, 1)).map((g) => (g.length ? { groups: g } : {})),
    scope.map((s) => (s ? { scope: s } : {})),
    lifetime,
  )
  .map((parts) => Object.assign({}, ...parts) as Spec);

export const world = fc.record({
  teams: fc.uniqueArray(fc.record({ name: fc.constantFrom(...teamNames), spec: teamSpec }), { selector: (t) => t.name, minLength: 1, maxLength: 4 }),
  keys: fc.array(keySpec, { minLength: 2, maxLength: 6 }).map((specs) => specs.map((spec, i) => ({ name: `k${i}`, spec }))),
});

/**
 * An owner reference as the model draws it, resolved against the live objects when sent: an owner
 * of a kind (by pick among the live ones), a uid (the owner's own, another live object's, or a
 * uid nothing has), and blockOwnerDeletion.
 */
export interface OwnerDraw {
  kind: 'Team' | 'OwnedAccessKey';
  pick: number;
  uid: 'own' | 'other' | 'none';
  otherPick: number;
  block: boolean;
}

const ownerDraw: fc.Arbitrary<OwnerDraw> = fc.record({
  kind: fc.constantFrom('Team' as const, 'OwnedAccessKey' as const),
  pick: fc.nat(9),
  uid: fc.constantFrom('own' as const, 'other' as const, 'none' as const),
  otherPick: fc.nat(9),
  block: fc.boolean(),
});

/** What a write may set of metadata: owners (none, or one or two), and a finalizer or none. */
export interface MetaDraw {
  owners: OwnerDraw[];
  finalizer: boolean;
}

const metaDraw: fc.Arbitrary<MetaDraw> = fc.record({ owners: fc.array(ownerDraw, { maxLength: 2 }), finalizer: fc.boolean() });
/** Mostly nothing: most writes in the model are about grants. */
const maybeMeta = fc.oneof({ weight: 2, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: metaDraw });

export const propagationPolicies = ['Background', 'Foreground', 'Orphan'] as const;
export type Policy = (typeof propagationPolicies)[number];

/** A write: what a random key (by index into the keys that exist) tries next. */
/** `pick` chooses among the objects the writer may write (else among all names), so few writes are a plain 403. */
export type Write =
  | { op: 'createTeam'; pick: number; spec: Spec; ownsItself: boolean; meta?: MetaDraw | undefined }
  | { op: 'patchTeam'; pick: number; patch: Spec }
  | { op: 'deleteTeam'; pick: number; policy: Policy }
  /** forRequester: the key is for the user of an Active AccessRequest, if any (model/requests.ts). */
  | { op: 'createKey'; spec: Spec; forSelf: boolean; meta?: MetaDraw | undefined; forRequester?: boolean }
  | { op: 'patchKey'; pick: number; patch: Spec }
  | { op: 'deleteKey'; pick: number; policy: Policy }
  /** A merge patch of metadata only: ownerReferences and finalizers, on a team or a key. */
  | { op: 'patchMeta'; plural: 'teams' | 'ownedaccesskeys'; pick: number; meta: MetaDraw; dropFinalizers: boolean }
  | RequestWrite
  | RuleWrite
  | SignInWrite;

/**
 * AccessRequests in the model (requests.ts): a request for a team, for the writer's own user or
 * another one, break-glass or not; an approval by the writer of a Pending request it may approve
 * (`which` absent or `mine`), of its own (`own`), or of one it approved already (`again`); and
 * the model's clock moving `ms` on (`tick`, the server's act), past some or every expiresAt.
 */
export type RequestWrite =
  | { op: 'requestAccess'; team: string; forUser?: string | undefined; duration: '20s' | '30s' | '1h'; breakGlass?: boolean }
  | { op: 'approveRequest'; pick: number; which?: 'mine' | 'own' | 'again' }
  | { op: 'tick'; ms: number };

/**
 * FederatedCredentials in the model (federation.ts): a rule written by a key for a team, for the
 * writer's own user or another, with a scope and ttl; a merge patch of its spec; its deletion.
 * After every accepted create or patch the model mints what the rule mints, as the exchange does.
 */
export type RuleWrite =
  | { op: 'createRule'; spec: Spec; forSelf: boolean }
  | { op: 'patchRule'; pick: number; patch: Spec }
  | { op: 'deleteRule'; pick: number; policy: Policy };

/**
 * Sign-in in the model (sign-in.ts): the server mints a Login key for a user with provider groups,
 * or a sign-in ends (logout: the Login key deletes itself; or the provider refuses the account);
 * and every key-setting write a key may send: a new value by the rotation subresource, PUT or JSON
 * patch, and re-enabling a disabled key.
 */
export type SignInWrite =
  | { op: 'signIn'; user: string; groups: string[] }
  | { op: 'endSignIn'; pick: number; how: 'logout' | 'refused' }
  | { op: 'setKeyValue'; pick: number; verb: 'rotate' | 'put' | 'patch' }
  | { op: 'reEnable'; pick: number };

const signInWrites = {
  signIn: fc.record({ op: fc.constant('signIn' as const), user: fc.constantFrom(...users), groups: subset(groups, 1) }),
  endSignIn: fc.record({ op: fc.constant('endSignIn' as const), pick: fc.nat(9), how: fc.constantFrom('logout' as const, 'refused' as const) }),
  setKeyValue: fc.record({ op: fc.constant('setKeyValue' as const), pick: fc.nat(9), verb: fc.constantFrom('rotate' as const, 'put' as const, 'patch' as const) }),
  reEnable: fc.record({ op: fc.constant('reEnable' as const), pick: fc.nat(9) }),
};

const keyPatch = fc.oneof(
  fc.constant({ scope: null }),
  scope.map((s) => ({ scope: s ?? null })),
  fc.constant({ ttl: null, ttlAfterLastActivity: null }),
  fc.constant({ ttl: 86_400 }),
  fc.constant({ ttlAfterLastActivity: true }),
  fc.constant({ disabled: false }),
  fc.constantFrom(...users).map((user) => ({ user, team: null })),
  fc.constantFrom(...teamNames).map((team) => ({ team, user: null })),
  subset(groups, 1).map((g) => ({ groups: g })),
);

const policy = fc.constantFrom(...propagationPolicies);

export const requestWrites = {
  request: fc.record({ op: fc.constant('requestAccess' as const), team: fc.constantFrom(...teamNames), forUser: fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, fc.constantFrom(...users)), duration: fc.constantFrom('30s' as const, '1h' as const) }),
  approve: fc.record({ op: fc.constant('approveRequest' as const), pick: fc.nat(9) }),
};

/** A key's scope that lets it write rules and keys, and nothing else. */
const ruleWriterScope = { rules: [{ verbs: ['get', 'list', 'create', 'update', 'patch', 'delete'], resources: [{ group: 'management.service', resources: ['federatedcredentials', 'ownedaccesskeys'] }] }] };

/** Scopes a rule may carry: a key's (scope above), or one naming what rules and keys need. */
const ruleScope = fc.oneof(
  { weight: 2, arbitrary: scope },
  fc.constant({ rules: [{ verbs: ['get', 'list', 'create', 'update', 'patch'], resources: [{ group: 'management.service', resources: ['federatedcredentials', 'ownedaccesskeys'] }] }] }),
);

/** A FederatedCredential's spec: whom its keys act for, their scope and ttl; the trust fields are the same throughout (the exchange is not what the model judges). */
export const ruleSpec: fc.Arbitrary<Spec> = fc
  .tuple(
    fc.oneof(fc.constantFrom(...users).map((user) => ({ user })), { weight: 2, arbitrary: fc.constantFrom(...teamNames).map((team) => ({ team })) }),
    ruleScope.map((s) => (s ? { scope: s } : {})),
    fc.constantFrom({}, { ttl: 600 }, { ttl: 86_400 }),
  )
  .map((parts) => ({ issuer: 'https://ci.example', audiences: ['teamkeys'], claims: { repository: 'acme/app' }, ...Object.assign({}, ...parts) }) as Spec);

const rulePatch = fc.oneof(
  ruleScope.map((s) => ({ scope: s ?? null })),
  fc.constantFrom({ ttl: 86_400 }, { ttl: null }),
  fc.constantFrom(...users).map((user) => ({ user, team: null })),
  fc.constantFrom(...teamNames).map((team) => ({ team, user: null })),
  fc.constantFrom({ claims: { repository: 'acme/*' } }, { audiences: ['teamkeys', 'other'] }, { displayName: 'renamed' }),
);

const ruleWrites = {
  create: fc.record({ op: fc.constant('createRule' as const), spec: ruleSpec, forSelf: fc.boolean() }),
  patch: fc.record({ op: fc.constant('patchRule' as const), pick: fc.nat(9), patch: rulePatch.map((p) => ({ spec: p })) }),
  delete: fc.record({ op: fc.constant('deleteRule' as const), pick: fc.nat(9), policy: fc.constantFrom(...propagationPolicies) }),
};

export const write: fc.Arbitrary<Write> = fc.oneof(
  { weight: 2, arbitrary: fc.record({ op: fc.constant('createTeam' as const), pick: fc.nat(9), spec: teamSpec, ownsItself: fc.boolean(), meta: maybeMeta }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant('patchTeam' as const), pick: fc.nat(9), patch: teamField.map((f) => ({ spec: f })) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('deleteTeam' as const), pick: fc.nat(9), policy }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('createKey' as const), spec: keySpec, forSelf: fc.boolean(), meta: maybeMeta }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('patchKey' as const), pick: fc.nat(9), patch: keyPatch.map((p) => ({ spec: p })) }) },
  fc.record({ op: fc.constant('deleteKey' as const), pick: fc.nat(9), policy }),
  { weight: 2, arbitrary: requestWrites.request },
  { weight: 2, arbitrary: requestWrites.approve },
  { weight: 2, arbitrary: ruleWrites.create },
  { weight: 1, arbitrary: ruleWrites.patch },
  { weight: 1, arbitrary: ruleWrites.delete },
  {
    weight: 3,
    arbitrary: fc.record({ op: fc.constant('patchMeta' as const), plural: fc.constantFrom('teams' as const, 'ownedaccesskeys' as const), pick: fc.nat(9), meta: metaDraw, dropFinalizers: fc.boolean() }),
  },
);

/** A scenario: the world, then writes, each by the key at `by` (an index into the live keys; `bySignIn`: among the signed-in ones, if any). */
export interface Scenario {
  world: { teams: TeamSeed[]; keys: KeySeed[]; rules?: { name: string; spec: Spec }[] };
  writes: { by: number; bySignIn?: boolean; write: Write }[];
}

export const scenario: fc.Arbitrary<Scenario> = fc.record({
  world,
  writes: fc.array(fc.record({ by: fc.nat(9), write }), { minLength: 1, maxLength: 8 }),
});

/**
 * Scenarios about sign-in: a world where some keys are disabled, and mostly sign-ins, key-setting
 * writes by signed-in keys (a Login key, or a key written with one), and sign-ins ending, besides
 * the writes of `scenario` (whose draws, and so the CI seed's worlds, stay as they were). Every
 * step is judged by both properties: no escalation, and nothing outliving its sign-in.
 */
export const signInScenario: fc.Arbitrary<Scenario> = fc.record({
  world: fc.tuple(world, fc.array(fc.boolean(), { minLength: 6, maxLength: 6 })).map(([w, off]) => ({
    ...w,
    keys: w.keys.map((k, i) => (off[i] ? { ...k, spec: { ...k.spec, disabled: true } } : k)),
  })),
  writes: fc.array(
    fc.record({
      by: fc.nat(9),
      bySignIn: fc.boolean(),
      write: fc.oneof(
        { weight: 3, arbitrary: signInWrites.signIn },
        { weight: 2, arbitrary: signInWrites.endSignIn },
        { weight: 3, arbitrary: signInWrites.setKeyValue },
        { weight: 3, arbitrary: signInWrites.reEnable },
        { weight: 2, arbitrary: write },
      ),
    }),
    { minLength: 2, maxLength: 10 },
  ),
});

/**
 * Scenarios about FederatedCredentials: a world with rules the administrator wrote, and mostly
 * rule writes (create, patch, delete) by random keys, among AccessRequests and the other writes.
 * After each accepted rule write, what the rule mints (now, and at a time past every ttl) holds
 * nothing its writer did not (run.ts, federation.ts).
 */
export const ruleScenario: fc.Arbitrary<Scenario> = fc.record({
  // Some keys are scoped to rules and keys only: a narrowed writer of rules.
  world: fc.tuple(world, fc.array(ruleSpec, { maxLength: 2 }), fc.array(fc.boolean(), { minLength: 6, maxLength: 6 })).map(([w, rules, narrowed]) => ({
    ...w,
    keys: w.keys.map((k, i) => (narrowed[i] ? { ...k, spec: { ...k.spec, scope: ruleWriterScope } } : k)),
    rules: rules.map((spec, i) => ({ name: `fc${i}`, spec })),
  })),
  writes: fc.array(
    fc.record({
      by: fc.nat(9),
      write: fc.oneof({ weight: 5, arbitrary: ruleWrites.create }, { weight: 3, arbitrary: ruleWrites.patch }, { weight: 1, arbitrary: ruleWrites.delete }, { weight: 1, arbitrary: requestWrites.request }, { weight: 1, arbitrary: requestWrites.approve }, { weight: 2, arbitrary: write }),
    }),
    { minLength: 3, maxLength: 8 },
  ),
});
