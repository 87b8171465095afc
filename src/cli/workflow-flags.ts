/** The pull-request workflow's flags: --policy (validate, plan, apply, watch), plan --out, apply --plan. */
import type { Command } from 'commander';

export interface WorkflowFlags {
  policy?: string;
  out?: string;
  plan?: string;
}

/** Adds --policy DIR. */
export function addPolicyFlag(cmd: Command): Command {
  return cmd.option('--policy <dir>', 'folder of Policy objects (CEL validations) every manifest must satisfy; a violation means nothing is written');
}
