// How a mutant is named across Stryker's outputs, for scripts/mutation-sample.mjs and the checker it
// turns on (scripts/mutation-sample-checker.mjs): the plan and the checker see mutants 0-based
// (line and column), the events of tested mutants 1-based.

/** The mutant's file from the tree's root, wherever the run was (a sandbox, another worktree). */
export const fileOf = (m) => /(?:^|\/)(src\/.*)$/.exec(m.fileName)?.[1] ?? m.fileName;

/** A mutant's name in its 1-based form: `base` is 1 for a 0-based mutant (plan, checker), 0 for an event's. */
export const keyOf = (m, base = 0) => {
  const { start, end } = m.location;
  return `${fileOf(m)}:${start.line + base}:${start.column + base}-${end.line + base}:${end.column + base} ${m.mutatorName} ${JSON.stringify(m.replacement)}`;
};
