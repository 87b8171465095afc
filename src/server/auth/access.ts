/**
 * kubectl's questions about its own access (can-i, can-i --list: kube's SelfSubjectAccessReview
 * and SelfSubjectRulesReview; "review" here is kube's kind name, not teamkeys' access review in
 * src/review): their attributes turned into authorize()'s (auth/decision.ts), which the request
 * path asks too, so an answer here is the answer a real request gets. What is these kinds' own:
 * which object a request would be judged on, the two groups every caller may use them in, `*` for
 * every verb or resource, and the rules list's grouping.
 */
import { apiPlurals, kindOfPlural } from '../../api/resources.js';
import type { KubeObject } from '../../api/types.js';
import { seesEverything, type Authorizer } from '../../auth/authorize.js';
import type { Identity } from '../../auth/identity.js';
import { allows, authorize, subresources } from '../../auth/decision.js';
import { verbs as allVerbs, type Resource, type Verb } from '../../auth/roles.js';
import type { Registry } from '../../registry/registry.js';
import { impersonationDenial, impersonationQuestion, impersonationRules } from '../../auth/impersonation-rights.js';

export interface AccessQuestion {
  verb: string;
  group: string;
  resource: string;
  subresource?: string;
  name?: string;
}

export interface AccessAnswer {
  allowed: boolean;
  reason?: string;
}

/** One line of `kubectl auth can-i --list`. */
export interface ResourceRule {
  verbs: string[];
  apiGroups: string[];
  resources: string[];
  resourceNames?: string[];
}

export const selfSubjectReviewGroups = { authentication: 'authentication.k8s.io', authorization: 'authorization.k8s.io' } as const;

/** Every authenticated caller may ask about itself, as in Kubernetes. */
const selfReviews: ResourceRule[] = [
  { verbs: ['create'], apiGroups: [selfSubjectReviewGroups.authentication], resources: ['selfsubjectreviews'] },
  { verbs: ['create'], apiGroups: [selfSubjectReviewGroups.authorization], resources: ['selfsubjectaccessreviews', 'selfsubjectrulesreviews'] },
];

/** How many objects of a kind the rules review looks at before it says it is incomplete. */
export const maxRulesReviewObjects = 500;

const isVerb = (v: string): v is Verb => (allVerbs as readonly string[]).includes(v);
const isResource = (r: string): r is Resource => (apiPlurals as readonly string[]).includes(r);

export class AccessAdvisor {
  constructor(
    private readonly authorizer: Authorizer,
    private readonly registry: Registry,
  ) {}

  get group(): string {
    return this.authorizer.group;
  }

  /** authorize() for one verb, with the object already read. */
  private decideOn(who: Identity, verb: Verb, resource: Resource, obj: KubeObject | undefined, q: AccessQuestion): AccessAnswer {
    const d = authorize(this.authorizer, { user: who, verb, resource, ...(q.name ? { name: q.name } : {}), ...(q.subresource ? { subresource: q.subresource } : {}), ...(obj ? { object: obj } : {}) });
    return { allowed: allows(d), ...(d.reason ? { reason: d.reason } : {}) };
  }

  /** Whether `who` may request a path outside the resource API (kube's nonResourceAttributes). */
  decidePath(who: Identity, verb: string, path: string): AccessAnswer {
    return { allowed: allows(authorize(this.authorizer, { user: who, verb, path })) };
  }

  /** The object a request for this verb would be judged against. */
  private async target(who: Identity, verb: Verb, resource: Resource, name: string | undefined): Promise<KubeObject | undefined> {
    const kind = kindOfPlural(resource);
    const stub = (spec?: object): KubeObject => ({ apiVersion: `${this.group}/v1`, kind, metadata: name ? { name } : {}, ...(spec ? { spec } : {}) });
    if (verb === 'create') {
      // A new team is judged without content; a new key by its content: the caller's own key.
      if (resource === 'teams') return undefined;
      return stub(who.user ? { user: who.user } : who.team ? { team: who.team } : { subject: who.subject });
    }
    if (!name) return undefined;
    // A missing object is judged as one of that name, as a read of it is.
    return (await this.registry.byPlural(resource)!.get(name).catch(() => undefined)) ?? stub();
  }

  /** Whether `who` may make the request; `*` as verb or resource means every one of them. */
  async decide(who: Identity, q: AccessQuestion): Promise<AccessAnswer> {
    const impersonated = impersonationQuestion(q);
    if (impersonated) {
      const denied = impersonationDenial(who, impersonated);
      return { allowed: denied === undefined, ...(denied ? { reason: denied } : {}) };
    }
    if (q.group === selfSubjectReviewGroups.authentication || q.group === selfSubjectReviewGroups.authorization) {
      const allowed = selfReviews.some((r) => r.apiGroups.includes(q.group) && r.resources.includes(q.resource) && (q.verb === 'create' || q.verb === '*') && !q.name && !q.subresource);
      return { allowed };
    }
    // `kubectl auth can-i '*' '*'` asks about everything: every group, so this server's too.
    const anyGroup = q.group === '*' || (q.group === '' && q.resource === '*');
    const asked = q.resource === '*' ? apiPlurals : isResource(q.resource) ? [q.resource] : [];
    if ((q.group !== this.group && !anyGroup) || asked.length === 0) {
      return { allowed: false, reason: `this server serves only teams and ownedaccesskeys, in API group "${this.group}"` };
    }
    const verbs = q.verb === '*' ? [...allVerbs] : isVerb(q.verb) ? [q.verb] : [];
    if (verbs.length === 0) return { allowed: false, reason: `verb "${q.verb}" does not apply to this API` };
    for (const resource of asked) {
      for (const verb of verbs) {
        const answer = this.decideOn(who, verb, resource, await this.target(who, verb, resource, q.name), q);
        if (!answer.allowed) return answer;
      }
    }
    return { allowed: true };
  }

  /** What `who` may do: rules for every object of a kind, then for named objects; incomplete past the cap. */
  async rules(who: Identity): Promise<{ rules: ResourceRule[]; incomplete: boolean }> {
    const rules: ResourceRule[] = [...selfReviews, ...impersonationRules(who)];
    let incomplete = false;
    for (const resource of apiPlurals) {
      const everywhere = await this.heldVerbs(who, resource, undefined);
      if (everywhere.length > 0) rules.push(rule(this.group, resource, everywhere));
      for (const [sub, served] of Object.entries(subresources[resource])) {
        const held: Verb[] = [];
        for (const verb of served) if ((await this.decide(who, { verb, group: this.group, resource, subresource: sub })).allowed) held.push(verb);
        if (held.length > 0) rules.push(rule(this.group, `${resource}/${sub}`, held));
      }
      // Verbs held on particular objects beyond those held on all, grouped by identical verb sets.
      const { items, more } = await this.named(who, resource);
      if (more) incomplete = true;
      const byVerbs = new Map<string, string[]>();
      for (const obj of items) {
        const name = obj.metadata.name!;
        const extra = (await this.heldVerbs(who, resource, obj)).filter((v) => !everywhere.includes(v));
        if (extra.length > 0) byVerbs.set(extra.join(','), [...(byVerbs.get(extra.join(',')) ?? []), name]);
      }
      for (const [verbs, names] of byVerbs) rules.push({ ...rule(this.group, resource, verbs.split(',') as Verb[]), resourceNames: names });
    }
    return { rules, incomplete };
  }

  /**
   * The objects whose own verbs the review names, and whether there may be more. `incomplete` must
   * not tell a caller how many objects it may not see (the first 500 of the kind, counted whatever
   * it saw, did: found by a review): a caller who sees the whole kind reads its first 500; one whose
   * objects an index finds, its own first 500; one whose role reaches an unindexed part of the kind
   * (too costly to scan for a review), the first 500 of the kind, always said incomplete.
   */
  private async named(who: Identity, resource: Resource): Promise<{ items: KubeObject[]; more: boolean }> {
    const kind = this.registry.byPlural(resource)!;
    const visible = this.authorizer.visible(who, resource);
    if (visible === seesEverything) {
      const { items } = await kind.list({ limit: maxRulesReviewObjects });
      return { items, more: items.length >= maxRulesReviewObjects };
    }
    // The index finds every object the caller holds a verb on, not only those it may read (an
    // access rule of update and delete without get: found by the review of this change).
    if (visible.within?.() !== undefined) {
      const holdsAny = Object.assign((obj: KubeObject) => this.authorizer.verbsOn(who, resource, obj).size > 0, { within: visible.within });
      const { items, metadata } = await kind.list({ limit: maxRulesReviewObjects, filter: holdsAny });
      return { items, more: Boolean(metadata.continue) };
    }
    return { items: (await kind.list({ limit: maxRulesReviewObjects })).items, more: true };
  }

  private async heldVerbs(who: Identity, resource: Resource, obj: KubeObject | undefined): Promise<Verb[]> {
    const name = obj?.metadata.name;
    const held: Verb[] = [];
    for (const verb of allVerbs) {
      // Creating is judged by the new object's content, not by an existing one of that name.
      if (obj && verb === 'create') continue;
      const target = obj ?? (await this.target(who, verb, resource, undefined));
      if (this.decideOn(who, verb, resource, target, { verb, group: this.group, resource, ...(name ? { name } : {}) }).allowed) held.push(verb);
    }
    return held;
  }
}

function rule(group: string, resource: string, verbs: readonly Verb[]): ResourceRule {
  return { verbs: verbs.length === allVerbs.length ? ['*'] : [...verbs], apiGroups: [group], resources: [resource] };
}
