// A Stryker checker that lets through only the mutants a sample picked (scripts/mutation-sample.mjs
// wrote them to the file STRYKER_SAMPLE names) and turns away every other mutant before any test
// runs. `--mutate` ranges alone cannot do it: a range also takes every mutant nested inside the one
// picked (a block's), four times the mutants here. Turned-away mutants show as CompileError with the
// reason "not in the sample"; the sample's score ignores them.
import { readFileSync } from 'node:fs';
import { declareClassPlugin, PluginKind } from '@stryker-mutator/api/plugin';
import { keyOf } from './mutation-keys.mjs';

class SampleChecker {
  picked = new Set();

  async init() {
    const file = process.env.STRYKER_SAMPLE;
    if (!file) throw new Error('STRYKER_SAMPLE names no sample file (see scripts/mutation-sample.mjs)');
    for (const p of JSON.parse(readFileSync(file, 'utf8')).picked) this.picked.add(p.key);
  }

  // Stryker's own mutants are 0-based, as the plan the sample was drawn from (see mutation-keys.mjs).
  async check(mutants) {
    return Object.fromEntries(
      mutants.map((m) => [m.id, this.picked.has(keyOf(m, 1)) ? { status: 'passed' } : { status: 'compileError', reason: 'not in the sample' }]),
    );
  }

  // One call for all: the answer is a set lookup.
  async group(mutants) {
    return [mutants.map((m) => m.id)];
  }
}

export const strykerPlugins = [declareClassPlugin(PluginKind.Checker, 'sample', SampleChecker)];
