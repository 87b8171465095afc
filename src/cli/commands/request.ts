/**
 * `teamkeys request --team T --for 4h --reason R`: asks for temporary membership of a team (an
 * AccessRequest) and prints its name; `teamkeys approve NAME` and `teamkeys deny NAME --reason R`
 * decide one through its approval subresource, as `kubectl certificate approve` does a CSR. Each
 * talks to a server (--server and --token-file, as every remote command).
 */
import type { Command } from 'commander';
import { defaultGroup } from '../../api/resources.js';
import { awaiting } from '../../api/access-request.js';
import type { KubeObject } from '../../api/types.js';
import { CliError } from '../errors.js';
import type { TargetFlags } from '../gitops-flags.js';

interface RequestOptions extends TargetFlags {
  team: string;
  for?: string;
  reason: string;
  user?: string;
  roles?: string;
}

interface DecideOptions extends TargetFlags {
  reason?: string;
}

/** The remote flags every command that talks to a server takes. */
function remote(cmd: Command): Command {
  return cmd
    .requiredOption('--server <url>', 'a teamkeys server, e.g. https://host:8080 (the path /kubernetes/management is added when none is given)')
    .option('--token-file <file>', 'file holding the access key for --server (or set TEAMKEYS_TOKEN)')
    .option('--ca-file <file>', 'PEM certificate to trust for --server')
    .option('--api-group <group>', 'API group the kinds are served under', defaultGroup);
}

async function httpClient(opts: TargetFlags) {
  const { openClient } = await import('../gitops-flags.js');
  const { HttpClient } = await import('../../client/http.js');
  const client = await openClient(opts);
  if (!(client instanceof HttpClient)) throw new CliError('access requests are decided on a server: pass --server');
  return client;
}

async function decide(name: string, opts: DecideOptions, type: 'Approved' | 'Denied'): Promise<void> {
  const client = await httpClient(opts);
  try {
    const current = await client.get('accessrequests', name);
    if (!current) throw new CliError(`accessrequest "${name}" not found`);
    const status = (current.status ?? {}) as { conditions?: unknown[] };
    const condition = { type, status: 'True', reason: type === 'Approved' ? 'ApprovedByCli' : 'DeniedByCli', message: opts.reason ?? '' };
    const body: KubeObject = { ...current, status: { ...status, conditions: [...(status.conditions ?? []), condition] } };
    const decided = await client.decideAccessRequest(name, body);
    const phase = (decided.status as { phase?: string; expiresAt?: string; conditions?: { type: string; status: string; message?: string }[] } | undefined) ?? {};
    // Still Pending: the server's count of the approvals that count (a second approver is needed, or an earlier one no longer counts).
    const waiting = phase.phase === 'Pending' ? phase.conditions?.find((c) => c.type === awaiting && c.status === 'True')?.message : undefined;
    console.log(`accessrequest.${opts.apiGroup}/${name} ${type.toLowerCase()}: ${phase.phase ?? 'Pending'}${phase.phase === 'Active' ? ` until ${phase.expiresAt}` : ''}${waiting ? ` (${waiting})` : ''}`);
  } finally {
    await client.close();
  }
}

export function registerRequest(program: Command): void {
  remote(
    program
      .command('request')
      .description('ask for temporary membership of a team (an AccessRequest); prints its name')
      .requiredOption('--team <team>', 'the team whose membership is asked for')
      .requiredOption('--reason <text>', 'why (an incident or ticket reference)')
      .option('--for <duration>', "how long, as 4h, 30m or 20s (default 8h, at most the team's maxDuration)")
      .option('--user <user>', 'ask for someone else (needs the right to add them to the team)')
      .option('--roles <roles>', "a comma-separated subset of the team's cluster roles"),
  ).action(async (opts: RequestOptions) => {
    const client = await httpClient(opts);
    try {
      const spec = { team: opts.team, reason: opts.reason, ...(opts.for ? { duration: opts.for } : {}), ...(opts.user ? { user: opts.user } : {}), ...(opts.roles ? { roles: opts.roles.split(',').filter(Boolean) } : {}) };
      const made = await client.create('accessrequests', { apiVersion: `${opts.apiGroup}/v1`, kind: 'AccessRequest', metadata: { generateName: `${opts.team}-` }, spec });
      console.log(made.metadata.name);
    } finally {
      await client.close();
    }
  });
  remote(program.command('approve').description("approve an AccessRequest (as one of the team's approvers)").argument('<name>', 'the AccessRequest')).action((name: string, opts: DecideOptions) => decide(name, opts, 'Approved'));
  remote(
    program
      .command('deny')
      .description('deny an AccessRequest')
      .argument('<name>', 'the AccessRequest')
      .requiredOption('--reason <text>', 'why it is denied'),
  ).action((name: string, opts: DecideOptions) => decide(name, opts, 'Denied'));
}
