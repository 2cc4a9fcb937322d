// The declarative tables of the routes outside the REST namespace: the session endpoints, the
// postback endpoint, the probes and metrics, the media files. Like the namespace's (rest/types.ts),
// every route has an id, an auth requirement, a description and validation, and a short handler;
// unlike them, each answers in its own format (plain bodies, its own failAction, raw payloads), so
// its hapi validation and payload options are registered as written, with no namespace defaults
// and no WordPress envelope.
import type { Lifecycle, RouteOptionsPayload, RouteOptionsValidate, Server } from '@hapi/hapi';
import type { Schema } from 'joi';

/**
 * `public`: anyone (networks, balancers, browsers, the shop site). `session`: a login cookie the
 * handler checks itself (the REST host authenticates only under the REST root).
 */
export type PlainAuth = 'public' | 'session';

export interface PlainRouteDef {
  /** Stable id, `<group>.<action>` (e.g. `session.login`), or the probe's name. */
  id: string;
  method: 'GET' | 'POST';
  /** Absolute path, outside the REST root: `/postback/{network}`. */
  path: string;
  auth: PlainAuth;
  description: string;
  /** hapi's validation of the route, with its own failAction and options; at least one schema. */
  validate: RouteOptionsValidate & ({ query: Schema } | { params: Schema } | { payload: Schema });
  /** hapi's payload options (limits, allowed types, raw bodies) of a route that takes a body. */
  payload?: RouteOptionsPayload;
  /** Answers `Range` requests (206); off by default, as a slice of a JSON answer is no JSON. */
  ranges?: true;
  handler: Lifecycle.Method;
}

/** Registers the routes of plain tables, each with its options exactly as declared. */
export function registerPlainRoutes(server: Server, routes: PlainRouteDef[]): void {
  for (const def of routes) {
    server.route({
      method: def.method,
      path: def.path,
      options: {
        id: def.id,
        description: def.description,
        plugins: { cashtrack: { auth: def.auth } },
        validate: def.validate,
        payload: def.payload,
        response: def.ranges ? { ranges: true } : undefined,
      },
      handler: def.handler,
    });
  }
}
