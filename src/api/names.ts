/** Name syntax (DNS-1123 subdomains, qualified names, label values) and generateName, as kube does. */
import { randomInt } from 'node:crypto';
import type { FieldError } from './field-errors.js';
import { isJsonMap, type KubeObject } from './types.js';

const dns1123SubdomainFmt = '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*';
const dns1123Subdomain = new RegExp(`^${dns1123SubdomainFmt}$`);
const qualifiedNameFmt = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const qualifiedName = new RegExp(`^${qualifiedNameFmt}$`);
const labelValueFmt = '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?';
const labelValue = new RegExp(`^${labelValueFmt}$`);

export const maxNameLength = 253;
const maxQualifiedNameLength = 63;

/** Problems with a DNS-1123 subdomain (object names, qualified-name prefixes); empty when valid. */
export function dns1123SubdomainErrors(value: string): string[] {
  const errs: string[] = [];
  if (value.length > maxNameLength) errs.push(`must be no more than ${maxNameLength} characters`);
  if (!dns1123Subdomain.test(value)) {
    errs.push(
      "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '" +
        dns1123SubdomainFmt +
        "')",
    );
  }
  return errs;
}

/** Problems with a qualified name (`[prefix/]name`: label and annotation keys, finalizers). */
export function qualifiedNameErrors(value: string): string[] {
  const parts = value.split('/');
  let name: string;
  const errs: string[] = [];
  if (parts.length === 1) name = parts[0]!;
  else if (parts.length === 2) {
    const prefix = parts[0]!;
    name = parts[1]!;
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else errs.push(...dns1123SubdomainErrors(prefix).map((m) => `prefix part ${m}`));
  } else {
    return [
      "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '" +
        qualifiedNameFmt +
        "') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (name.length > maxQualifiedNameLength) errs.push(`name part must be no more than ${maxQualifiedNameLength} characters`);
  if (name.length > 0 && !qualifiedName.test(name)) {
    errs.push(
      "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '" +
        qualifiedNameFmt +
        "')",
    );
  }
  return errs;
}

/** Problems with a label value; empty when valid. */
export function labelValueErrors(value: string): string[] {
  const errs: string[] = [];
  if (value.length > maxQualifiedNameLength) errs.push(`must be no more than ${maxQualifiedNameLength} characters`);
  if (!labelValue.test(value)) {
    errs.push(
      "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '" +
        labelValueFmt +
        "')",
    );
  }
  return errs;
}

/** A generateName prefix is valid when it would be a valid name with its trailing dash masked. */
export function generateNamePrefixErrors(prefix: string): string[] {
  const masked = prefix.endsWith('-') ? `${prefix.slice(0, -1)}a` : prefix;
  return dns1123SubdomainErrors(masked);
}

const suffixAlphabet = 'bcdfghjklmnpqrstvwxz2456789';
const maxPrefixLength = 58;
const suffixLength = 5;

/** `prefix` cut to 58 characters plus 5 random characters that never spell words. */
export function generateName(prefix: string): string {
  let suffix = '';
  for (let i = 0; i < suffixLength; i++) suffix += suffixAlphabet[randomInt(suffixAlphabet.length)];
  return prefix.slice(0, maxPrefixLength) + suffix;
}

/**
 * How a team's keys are named as a holder (`team:<name>`, auth/identity.ts subjectOf): a user or
 * subject may not be named so, or its keys would count against that team's quota and be looked up
 * among the team's (the holder index holds both under one value).
 */
export const teamHolderPrefix = 'team:';

/** Whether `value` is a name of that form. */
export const namedLikeTeamHolder = (value: unknown): value is string => typeof value === 'string' && value.startsWith(teamHolderPrefix);

/** The refusal's detail (the reconciler judges it against the live object: gitops/team-holder-names.ts). */
export const teamHolderDetail = `may not begin with "${teamHolderPrefix}": that is how the keys of a team are named as their holder; set spec.team for a team's key`;

/** The fields of each kind that name whom its keys act for, besides spec.team. */
const holderNameFields: Record<string, readonly string[]> = { OwnedAccessKey: ['user', 'subject'], FederatedCredential: ['user'] };

const specOf = (obj: KubeObject | undefined): Record<string, unknown> => (isJsonMap(obj?.spec) ? obj.spec : {});

/**
 * Each such field of `obj`, an object of `kind`, named like a team's holder, as a field error; only
 * where the value is new (`old`: the stored object, whose name stays until that field changes, as
 * kube ratchets a new rule).
 */
export function holderNameErrors(kind: string, obj: KubeObject, old: KubeObject | undefined): FieldError[] {
  return (holderNameFields[kind] ?? []).flatMap((f): FieldError[] => {
    const value = specOf(obj)[f];
    return namedLikeTeamHolder(value) && value !== specOf(old)[f] ? [{ type: 'Invalid', field: `spec.${f}`, value, detail: teamHolderDetail }] : [];
  });
}
