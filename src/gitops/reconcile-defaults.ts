/**
 * The reconciler's defaults (flux's DefaultApplyOptions): the CLI's flags, the daemon's flags and
 * the GitHub Action's inputs all start from these. Kept apart from reconcile.ts so that declaring
 * a flag loads nothing of the reconciler.
 */
import { defaultWarnExpiryMs, defaultWarnUnusedMs } from '../auth/key-health.js';

export const defaultReconcileOptions = {
  /** A run that would delete more objects than this is refused. */
  maxPrune: 50,
  /** Objects written in parallel. */
  concurrency: 8,
  /** The report's key health section: live keys expiring within this. */
  warnExpiryMs: defaultWarnExpiryMs,
  /** The report's key health section: live keys unused for longer than this. */
  warnUnusedMs: defaultWarnUnusedMs,
} as const;
