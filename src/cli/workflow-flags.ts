/** The pull-request workflow's flags: --policy (validate, plan, apply, watch), plan --out, apply --plan. */
import type { Command } from 'commander';
import { addFlags, policyFlag, type OptionsOf } from './flag-specs.js';

export type WorkflowFlags = OptionsOf<[typeof policyFlag]> & {
  out?: string;
  plan?: string;
};

/** Adds --policy DIR. */
export function addPolicyFlag(cmd: Command): Command {
  return addFlags(cmd, [policyFlag]);
}
