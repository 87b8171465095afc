/** The note of a step the run was stopped before (SIGTERM): nothing was written for it, and the run did not finish. */
export const notStartedNote = 'not started: the run was stopped';
