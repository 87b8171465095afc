/** Which receivers an event goes to: every route whose lists all match it (an absent list matches anything). */
import type { NotificationConfig, Route } from './config.js';
import type { KeyEvent } from './events.js';

const admits = (list: string[] | undefined, value: string | undefined) => list === undefined || (value !== undefined && list.includes(value));

export function routeMatches(route: Route, e: KeyEvent): boolean {
  return admits(route.events, e.event) && admits(route.teams, e.key.team) && admits(route.owners, e.key.owner) && admits(route.keys, e.key.name);
}

/** The receivers of `e`, each once, in the order the routes name them. */
export function receiversOf(config: NotificationConfig, e: KeyEvent): string[] {
  return [...new Set(config.routes.filter((r) => routeMatches(r, e)).map((r) => r.receiver))];
}
