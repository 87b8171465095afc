/**
 * The bundled Action on a schedule rotates a key that fell due: the new value reaches the
 * repository secret (the stand-in opens it), the job summary shows the rotation, and the value CI
 * still holds keeps working through the overlap.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GitHubStandIn } from '../gitops/github-standin.js';
import type { InProcess } from '../server/in-process.js';
import { day, ManualClock } from '../support/clock.js';
import { startMonthlyKeyAction, type MonthlyKeyAction } from '../support/monthly-key-action.js';

describe('the Action rotates keys on a schedule', () => {
  const clock = new ManualClock(Date.now() - 31 * day);
  let server: InProcess;
  let github: GitHubStandIn;
  let world: MonthlyKeyAction;
  let inputs: Record<string, string>;
  const runAction = (given: Record<string, string>) => world.run(given);

  beforeAll(async () => {
    world = await startMonthlyKeyAction(clock);
    ({ server, github, inputs } = world);
  });
  afterAll(() => world?.stop());

  it('delivers the rotated value and shows the rotation in the job summary', async () => {
    const created = await runAction(inputs);
    expect(created.code, created.stdout).toBe(0);
    const first = github.secrets.get('acme/payments/DEPLOY_KEY')!;
    clock.set(Date.now());

    const rotated = await runAction(inputs);
    expect(rotated.code, rotated.stdout).toBe(0);
    const second = github.secrets.get('acme/payments/DEPLOY_KEY')!;
    expect(second).not.toBe(first);
    expect(rotated.summary).toContain('## teamkeys apply: rotated 1');
    expect(rotated.summary).toMatch(/\| rotate → Rotated \| OwnedAccessKey\/deploy-ci \|.*value 31d old, rotate-every 30d\): delivered to `?github:acme\/payments\/DEPLOY_KEY`?; the previous value works until/);
    expect(rotated.output).toMatch(/changes<<\S+\n1\n/);
    for (const v of [first, second]) expect(rotated.stdout + rotated.summary).not.toContain(v);
    for (const v of [first, second]) expect((await fetch(`${server.api}/ownedaccesskeys/deploy-ci`, { headers: { Authorization: `Bearer ${v}` } })).status).toBe(200);
  });
});
