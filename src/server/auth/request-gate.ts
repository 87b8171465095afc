/**
 * The first steps every request meets, in kube-apiserver's order: its canonical path (rewritten
 * before routing: canonical-path.ts) says whether it may be anonymous; every other request is
 * authenticated before anything else runs, the body unread, whether or not a route matches (so an
 * unknown path is 401 without a key, never 404, and no body is buffered or decoded for a stranger).
 * Authorization of the request's attributes follows before the body too (before-body.ts, on the
 * resource routes); only then is the body read and decoded (content.ts), then admission. docs/auth.md.
 */
import type { FastifyInstance, preParsingHookHandler } from 'fastify';
import { badRequest, pathNotFound } from '../../api/errors.js';
import { apiPrefix } from '../../api/resources.js';
import { authPrefix } from '../../signin/options.js';
import { pathOf } from '../canonical-path.js';
import { gitHubScanningPath } from '../routes/github-secret-scanning.js';
import { revokePath } from '../routes/revoke.js';
import { authenticateRequest } from './endpoint-auth.js';
import type { AuthContext } from './guard.js';
import { anonymousBodyLimit, type AnonymousBodies } from './anonymous-bodies.js';

/** What kube-apiserver serves to anyone (system:public-info-viewer), as exact canonical paths. */
const publicPaths = ['/healthz', '/livez', '/readyz', '/version', `${apiPrefix}/version`];
/** Whoever finds a key may revoke it with the key alone (routes/revoke.ts): a small form, bounded per address. */
const reportPaths = [revokePath];
/**
 * The sidecar's webhook authenticates itself, by its signature over the body or else by a key in its
 * route (daemon/routes.ts), and so do GitHub's secret scanning alerts (by GitHub's signature): each
 * must read the body before it can know who sent it.
 */
const selfAuthenticating = ['/sync', gitHubScanningPath];

/** The token endpoint: a CI job trades its ID token there for a key (src/federation), so it needs none. */
const tokenPath = `${authPrefix}/token`;

/** The bodies a caller without a key may send to the forms: anonymous-bodies.ts. */
export { anonymousBodyLimit } from './anonymous-bodies.js';

export interface GateOptions {
  /** Sign-in is served: /auth/* is open to anyone (it is how one gets a key). */
  signIn: boolean;
  /** The bound on bodies read from clients without a key, per address and for the server (anonymous-bodies.ts). */
  anonymousBodies: AnonymousBodies;
}

/** The explicit list of what needs no key, by canonical path. */
export function anonymousPath(path: string, opts: Pick<GateOptions, 'signIn'>): boolean {
  if (publicPaths.includes(path) || reportPaths.includes(path) || selfAuthenticating.includes(path) || path === tokenPath) return true;
  return opts.signIn && path.startsWith(`${authPrefix}/`);
}

/** A route as registered: its methods and its path pattern (`:name` for a parameter). */
export interface RouteEntry {
  methods: string[];
  url: string;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route registered after the gate, which the gate stands before (tests walk it). */
    routeTable: RouteEntry[];
  }
}

/** Registers the gate; call before any route is registered (the body bound is set per route). */
export function registerRequestGate(app: FastifyInstance, auth: AuthContext, opts: GateOptions): void {
  const table: RouteEntry[] = [];
  app.decorate('routeTable', table);
  app.addHook('onRoute', (route) => {
    const url = route.url ?? route.path;
    table.push({ methods: [route.method].flat(), url });
    if (!anonymousPath(url, opts)) return;
    // Route paths are already canonical; the sign-in forms are small, and read before any key.
    if (!selfAuthenticating.includes(url)) route.bodyLimit = anonymousBodyLimit;
    // Bodies sent without a key are counted as they arrive (anonymous-bodies.ts); only these routes pay for the meter.
    const meter: preParsingHookHandler = (req, _reply, payload, done) => done(null, opts.anonymousBodies.metered(req, payload));
    route.preParsing = [...[route.preParsing ?? []].flat(), meter];
  });
  app.addHook('onRequest', async (req, reply) => {
    const path = pathOf(req.raw);
    if (path === undefined) throw badRequest('the request path is not valid: malformed percent-encoding');
    const anonymous = anonymousPath(path, opts);
    if (!anonymous) await authenticateRequest(req, reply, auth);
    // No route serves this method on this path (POST /healthz, a GET-only discovery path): the
    // answer is known now, so the body is neither read nor decoded (the not-found route would read it).
    if (req.is404) throw pathNotFound();
    // Whoever sends no key sends its body only within the bounds of all such bodies.
    if (anonymous) opts.anonymousBodies.admit(req, reply);
  });
}
