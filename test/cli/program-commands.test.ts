/**
 * A run loads only the command module it names (src/cli/program.ts): its table of which module
 * registers which commands must say what the modules do, or a command would be unknown when named
 * alone, or slip past the table into the full program's slower start.
 */
import { describe, expect, it } from 'vitest';
import { buildProgram, modulesFor } from '../../src/cli/program.js';

const names = async (only?: string) => (await buildProgram(only)).commands.map((c) => c.name());

describe('the program registers the command a run names', () => {
  it("every command is in the table, and named alone registers exactly its module's commands", async () => {
    const all = await names();
    expect(modulesFor(undefined).flatMap(([n]) => n)).toEqual(all);
    for (const name of all) {
      const alone = await names(name);
      expect(alone, name).toContain(name);
      if (name !== 'completion') expect(alone, name).toEqual(modulesFor(name)[0]![0]);
    }
  });

  it('help, completion, a flag first and an unknown name get every command', async () => {
    const all = await names();
    expect(all.length).toBeGreaterThan(15);
    for (const first of [undefined, 'help', 'completion', '--help', '-V', 'validat']) expect(await names(first), String(first)).toEqual(all);
  });
});
