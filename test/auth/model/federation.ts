/**
 * FederatedCredentials in the escalation model: rule writes a key sends over HTTP (a rule for a
 * team, for its own user or another, a merge patch of a rule's spec, a deletion), and the property
 * of issue 34: once a rule write is accepted, the key the rule mints holds nothing its writer did
 * not hold before the write. The key is minted as the exchange mints it (src/federation/mint.ts:
 * the registry and the admission chain with the exchange's exemptions, the rule's ttl), in-process
 * without a job token (the token's checks are not what the model judges), twice: now, and with the
 * registry's clock past every ttl of the world (the rule goes on minting after its writer's key
 * or temporary access has ended). On the minted key itself it may hold what the writer holds on it
 * (whoever may write the rule manages that team's or user's keys).
 */
import { mintedKeySpec } from '../../../src/api/federated-key.js';
import type { FederatedCredential } from '../../../src/api/types.js';
import { mintFederatedKey } from '../../../src/federation/mint.js';
import { later, permissions, type Model, type Probe, type Violation } from './harness.js';
import { teamNames, type Policy, type RuleWrite, type Spec } from './world.js';

const merge = 'application/merge-patch+json';
const job = 'repository acme/app on refs/heads/main, workflow model, run 1';

/** How many rule writes were accepted and how many keys were minted and judged (so a run that judged nothing shows). */
export const ruleStats = { accepted: 0, minted: 0 };

const ruleBody = (name: string, spec: Spec) => ({ apiVersion: 'management.service/v1', kind: 'FederatedCredential', metadata: { name }, spec });

/** The administrator's rules of the world. */
export async function seedRules(m: Model, rules: { name: string; spec: Spec }[]): Promise<void> {
  for (const r of rules) await m.request('POST', '/federatedcredentials', ruleBody(r.name, r.spec), m.values.get('admin')!);
}

/** The user a key acts for, if it is a user's key. */
async function userOf(m: Model, key: string): Promise<string | undefined> {
  const k = await m.registry.ownedaccesskeys.get(key).catch(() => undefined);
  return (k?.spec as { user?: string } | undefined)?.user;
}

/** A live rule the writer may write (for a team it may update, or for its own user), else any: so few writes are a plain 403. */
async function pickRule(m: Model, perms: Set<Probe>, user: string | undefined, pick: number): Promise<string | undefined> {
  const rules = (await m.registry.federatedcredentials.list()).items.filter((r) => !r.metadata.deletionTimestamp);
  const mine = rules.filter((r) => {
    const s = r.spec as { team?: string; user?: string };
    return (s.team !== undefined && perms.has(`update teams/${s.team}`)) || (s.user !== undefined && s.user === user);
  });
  const from = mine.length > 0 ? mine : rules;
  return from.length > 0 ? from[pick % from.length]!.metadata.name! : undefined;
}

/** Sends one rule write with the writer's key; returns its status and the rule it wrote. */
export async function sendRuleWrite(m: Model, writer: string, w: RuleWrite, perms: Set<Probe>, n: number): Promise<{ status: number; rule?: string }> {
  const as = m.values.get(writer)!;
  const user = await userOf(m, writer);
  if (w.op === 'createRule') {
    const rule = `f${n}`;
    const { team, ...rest } = w.spec as Spec & { team?: string };
    // For its own user, or for a team it may update if there is one (as the other writes choose).
    const mayUpdate = teamNames.filter((t) => perms.has(`update teams/${t}`));
    const spec = w.forSelf && user ? { ...rest, user } : team && mayUpdate.length > 0 ? { ...rest, team: mayUpdate[teamNames.indexOf(team) % mayUpdate.length] } : w.spec;
    return { status: (await m.request('POST', '/federatedcredentials', ruleBody(rule, spec), as)).status, rule };
  }
  const rule = await pickRule(m, perms, user, w.pick);
  if (!rule) return { status: 404 };
  if (w.op === 'patchRule') return { status: (await m.request('PATCH', `/federatedcredentials/${rule}`, w.patch, as, merge)).status, rule };
  const policy: Policy = w.policy;
  return { status: (await m.request('DELETE', `/federatedcredentials/${rule}?propagationPolicy=${policy}`, undefined, as)).status, rule };
}

/** Mints one key on the rule through the exchange's code path; undefined when the mint is refused (nothing minted is nothing gained). */
const mint = (m: Model, rule: FederatedCredential) =>
  mintFederatedKey(m.registry, rule, job, mintedKeySpec(rule).ttl!, { username: `job:${job}` }, m.auth).catch(() => undefined);

/** What `minted` holds that the writer did not hold before, other than on the minted keys where the writer holds it now. */
function beyond(minted: Set<Probe>, before: Set<Probe>, writerNow: Set<Probe>, mintedNames: string[]): Probe[] {
  const onMinted = (p: Probe) => mintedNames.some((k) => p.endsWith(` ownedaccesskeys/${k}`));
  return [...minted].filter((p) => !before.has(p) && !(onMinted(p) && writerNow.has(p)));
}

/**
 * The property after an accepted create or patch of `rule` by `writer`: a key minted on it now
 * (kept in the world: a job holds it and may write with it) holds nothing beyond the writer's
 * permissions before the write at `now`; one minted `later` ms on (judged then, then deleted)
 * nothing beyond the writer's at that time.
 */
export async function mintedBeyondWriter(m: Model, writer: string, rule: string, before: { now: Set<Probe>; later: Set<Probe> }): Promise<Violation[]> {
  const obj = (await m.registry.federatedcredentials.get(rule).catch(() => undefined)) as FederatedCredential | undefined;
  if (!obj || obj.metadata.deletionTimestamp) return [];
  ruleStats.accepted++;
  const found: Violation[] = [];
  const soon = await mint(m, obj);
  if (soon) {
    ruleStats.minted++;
    m.values.set(soon.name, soon.key);
    const after = await permissions(m, m.now(), [], [soon.name, writer]);
    found.push(...beyond(after.get(soon.name)!, before.now, after.get(writer)!, [soon.name]).map((probe) => ({ key: soon.name, probe, when: 'now' as const })));
  }
  const then = await m.ahead(later, () => mint(m, obj));
  if (then) {
    ruleStats.minted++;
    m.values.set(then.name, then.key);
    try {
      const after = await permissions(m, new Date(m.now().getTime() + later), [], [then.name, writer]);
      const minted = [then.name, ...(soon ? [soon.name] : [])];
      found.push(...beyond(after.get(then.name)!, before.later, after.get(writer)!, minted).map((probe) => ({ key: then.name, probe, when: 'later' as const })));
    } finally {
      m.values.delete(then.name);
      await m.registry.ownedaccesskeys.delete(then.name).catch(() => undefined);
    }
  }
  return found;
}
