/**
 * The names a saved plan carries, checked before anything in it is used: a plan file sits where a
 * pull request's job may write, and its checksum is no signature, so an action named `../../x`
 * (which would name a key file outside --key-dir, or another API path) is refused, as is a kind
 * the API does not serve, an action type apply does not know, or a body naming another object.
 */
import { dns1123SubdomainErrors } from '../../api/names.js';
import { servedKinds } from '../../api/resources.js';
import { isJsonMap } from '../../api/types.js';

const actionTypes = new Set(['create', 'update', 'replace', 'delete', 'unchanged', 'skip']);

/** What is wrong with one `{kind, plural, name}` entry, named by where it is in the file. */
function entryErrors(where: string, entry: unknown): string[] {
  if (!isJsonMap(entry)) return [`${where} is not an object`];
  const { kind, plural, name } = entry;
  const errs: string[] = [];
  if (!servedKinds.some((k) => k.kind === kind && k.plural === plural)) errs.push(`${where}: kind ${JSON.stringify(kind)} with plural ${JSON.stringify(plural)} is not a served kind`);
  if (typeof name !== 'string' || dns1123SubdomainErrors(name).length > 0) errs.push(`${where}: name ${JSON.stringify(name)} is not a valid object name`);
  return errs;
}

/** Every name problem in a parsed saved plan (actions, reads, objects); empty when all are valid. */
export function savedPlanNameErrors(plan: { actions: unknown[]; reads: unknown[]; objects?: unknown }): string[] {
  const errs: string[] = [];
  plan.actions.forEach((a, i) => {
    const where = `actions[${i}]`;
    errs.push(...entryErrors(where, a));
    if (!isJsonMap(a)) return;
    if (typeof a.type !== 'string' || !actionTypes.has(a.type)) errs.push(`${where}: unknown action type ${JSON.stringify(a.type)}`);
    const body = a.body;
    if (body !== undefined && !(isJsonMap(body) && isJsonMap(body.metadata) && body.metadata.name === a.name && body.kind === a.kind)) {
      errs.push(`${where}: its body does not describe ${String(a.kind)}/${String(a.name)}`);
    }
  });
  plan.reads.forEach((r, i) => errs.push(...entryErrors(`reads[${i}]`, r)));
  if (!Array.isArray(plan.objects)) errs.push('objects is not a list');
  else
    plan.objects.forEach((o, i) => {
      const meta = isJsonMap(o) ? o.metadata : undefined;
      const name = isJsonMap(meta) ? meta.name : undefined;
      if (typeof name !== 'string' || dns1123SubdomainErrors(name).length > 0) errs.push(`objects[${i}]: name ${JSON.stringify(name)} is not a valid object name`);
    });
  return errs;
}
