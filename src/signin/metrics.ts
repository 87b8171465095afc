/** Sign-in's Prometheus metrics: sign-ins by result and identity refreshes by outcome. */
import { Counter, Registry } from 'prom-client';

/** What an identity refresh can end in. */
export type RefreshOutcome = 'refreshed' | 'refused' | 'unreachable' | 'failed';

export class SignInMetrics {
  readonly registry = new Registry();
  readonly signIns = new Counter({
    name: 'teamkeys_signin_total',
    help: 'Sign-ins by result: success (a Login key minted), refused (not allowed), failed (the provider or its answer failed), invalid (bad state, code or verifier).',
    labelNames: ['result'],
    registers: [this.registry],
  });
  readonly refreshes = new Counter({
    name: 'teamkeys_identity_refresh_total',
    help: "Identity refreshes of Login keys by outcome: refreshed, refused (the provider refused: the key stops working), unreachable (kept working, retried), failed (could not be written).",
    labelNames: ['outcome'],
    registers: [this.registry],
  });
}
