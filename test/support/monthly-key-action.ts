/**
 * The scheduled-rotation Action tests' world: the in-process server on a test clock, the GitHub
 * secrets stand-in, a repository holding the monthly-rotated key (monthlyKeyYaml, 6 h overlap) under
 * gitops/, and the bundled Action run against them (`command: apply`, source id ci-keys).
 */
import { newRepo, type Repo } from '../gitops/git-repo.js';
import { startGitHubStandIn, type GitHubStandIn } from '../gitops/github-standin.js';
import { actionRunner, pullRequestPayload, schedulePayload, type ActionRun } from './action-runner.js';
import type { ManualClock } from './clock.js';
import { adminKey, startInProcess, type InProcess } from './in-process.js';
import { monthlyKeyYaml } from './manifests.js';

export interface MonthlyKeyAction {
  server: InProcess;
  github: GitHubStandIn;
  repo: Repo;
  /** The Action's inputs: apply gitops/ to the server, delivering to the stand-in. */
  inputs: Record<string, string>;
  /** The Action as a runner starts it for `event`; `stdout` is its log. */
  run(inputs: Record<string, string>, event?: 'schedule' | 'pull_request'): Promise<ActionRun & { stdout: string }>;
  stop(): Promise<void>;
}

export async function startMonthlyKeyAction(clock: ManualClock): Promise<MonthlyKeyAction> {
  const server = await startInProcess({ now: clock.now });
  const github = await startGitHubStandIn();
  const runner = actionRunner();
  const repo = await newRepo({ withExamples: false });
  repo.write('gitops/deploy.yaml', monthlyKeyYaml({ overlap: '6h' }));
  await repo.commit('a monthly key');
  return {
    server,
    github,
    repo,
    inputs: { command: 'apply', server: server.base, token: adminKey, source: 'gitops', 'source-id': 'ci-keys', 'github-token': github.token },
    run: async (inputs, event = 'schedule') => {
      const r = await runner.run({ workspace: repo.dir, event, payload: event === 'pull_request' ? pullRequestPayload() : schedulePayload, inputs, apiUrl: github.url });
      return { ...r, stdout: r.log };
    },
    stop: async () => {
      await server.close();
      await github.close();
      repo.cleanup();
      runner.cleanup();
    },
  };
}
